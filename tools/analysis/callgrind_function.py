#!/usr/bin/env python3
"""callgrind_function.py CALLGRIND_OUT FUNCTION LIBRARY

Prints FUNCTION's disassembly (objdump of LIBRARY) with the number of
times callgrind executed each instruction, and the function's total:
exact counts where a timing on this VM moves by 20%.  CALLGRIND_OUT must
come from a run with --dump-instr=yes, e.g.

  SGC_MARKERS=1 valgrind --tool=callgrind --dump-instr=yes \\
      --callgrind-out-file=/tmp/cg.out build/bench/bench-cky-sgc -t 1 -n 10
  tools/analysis/callgrind_function.py /tmp/cg.out mark_drain_own build/src/libsgc.so

How often a branch went one way is the count at its target against the
count at the instruction after it (how the marker's page-cache hit rates
in history.md were read).  Addresses are the library's own (callgrind
records them relative to the object for a shared library).
"""
import collections
import re
import subprocess
import sys


def instruction_counts(path, function):
    """{address: executions} of FUNCTION's instructions in a callgrind
    file written with --dump-instr=yes (positions "instr line")."""
    counts = collections.Counter()
    names, current, last, skip_next = {}, None, 0, False
    with open(path) as f:
        for line in f:
            m = re.match(r"(c?fn)=\((\d+)\)(?: (.*))?", line)
            if m:
                if m.group(3):
                    names[m.group(2)] = m.group(3).strip()
                if m.group(1) == "fn":
                    current = names.get(m.group(2))
                continue
            if line.startswith("calls="):
                skip_next = True  # the next cost line is the call's inclusive cost
                continue
            m = re.match(r"^(0x[0-9a-f]+|[+-]\d+|\*)\s+\S+\s+(\d+)", line)
            if not m:
                continue
            a = m.group(1)
            last = int(a, 16) if a.startswith("0x") else last if a == "*" else last + int(a)
            if skip_next:
                skip_next = False
            elif current == function:
                counts[last] += int(m.group(2))
    return counts


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    path, function, library = sys.argv[1:]
    counts = instruction_counts(path, function)
    if not counts:
        sys.exit(f"no instructions of {function} in {path} (run with --dump-instr=yes?)")
    dis = subprocess.run(["objdump", "-d", "--no-show-raw-insn", library], check=True,
                         capture_output=True, text=True).stdout
    start = dis.find(f"<{function}>:\n")
    if start < 0:
        sys.exit(f"{function} not found in {library}")
    body = dis[start:]
    for line in body[: body.find("\n\n")].splitlines()[1:]:
        address = int(line.split(":", 1)[0], 16)
        print(f"{counts.get(address, 0):>12} {line}")
    print(f"{sum(counts.values()):>12} instructions in {function}")


if __name__ == "__main__":
    main()
