"""The benchmark runner behind bench/run.py, one concern per module."""
