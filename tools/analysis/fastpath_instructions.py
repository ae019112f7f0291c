#!/usr/bin/env python3
"""Counts the instructions of GC_malloc's hit paths in a built libsgc.

Usage: tools/analysis/fastpath_instructions.py [build/src/libsgc.so]

It disassembles GC_malloc with objdump and walks it from the entry: every
conditional branch falls through (the hit path: thread registered, small
request, non-empty list).  The thread's own list is popped first whatever
the cache mode, so the per-CPU hit path is the walk that instead takes
the branch that leads, with no branch in between, to the allocation-cache
mode test (`cmpb $0x0,...` on percpu_enabled: the thread's list was
empty), and then falls through that test.  Unconditional jumps are
followed; a path ends at `ret`.  Prints both counts and their difference
(issue 6: the per-CPU path may cost at most 8 more).
"""
import re
import subprocess
import sys

lib = sys.argv[1] if len(sys.argv) > 1 else "build/src/libsgc.so"
out = subprocess.run(["objdump", "-d", "--no-show-raw-insn", lib], check=True,
                     capture_output=True, text=True).stdout
body = out[out.index("<GC_malloc>:"):]
body = body[:body.index("\n\n")]
ins = {}
for line in body.splitlines()[1:]:
    m = re.match(r"\s*([0-9a-f]+):\s+(.*)", line)
    if m:
        ins[int(m.group(1), 16)] = m.group(2).split("#")[0].strip()
order = sorted(ins)


def reaches_mode_test(addr):
    """Whether straight-line code from ADDR arrives at the mode test."""
    i = order.index(addr)
    while i < len(order):
        text = ins[order[i]]
        if text.startswith("cmpb   $0x0"):
            return True
        if text.split()[0].startswith("j") or text.startswith("ret"):
            return False
        i += 1
    return False


def walk(per_cpu):
    path, addr = [], order[0]
    while len(path) < 200:
        text = ins[addr]
        op = text.split()[0]
        if not op.startswith("nop"):
            path.append(text)
        if op == "ret":
            return path
        target = None
        if op.startswith("j") and len(text.split()) > 1:
            try:
                target = int(text.split()[1], 16)
            except ValueError:
                target = None
        if op == "jmp":
            addr = target
        elif op.startswith("j") and per_cpu and target in ins and reaches_mode_test(target):
            addr = target
        else:
            addr = order[order.index(addr) + 1]
    raise SystemExit("no ret found: GC_malloc's layout changed")


thread, cpu = walk(False), walk(True)
if thread == cpu:
    raise SystemExit("no branch to the mode test found: GC_malloc's layout changed")
print(f"per-thread hit path: {len(thread)} instructions")
print(f"per-CPU hit path:    {len(cpu)} instructions")
print(f"difference:          {len(cpu) - len(thread)}")
