#!/usr/bin/env python3
"""Counts the instructions of GC_malloc's hit paths in a built libsgc.

Usage: tools/fastpath_instructions.py [build/src/libsgc.so]

It disassembles GC_malloc with objdump and walks it from the entry: every
conditional branch falls through (the hit path: thread registered, small
request, non-empty list), except the branch after the allocation-cache
mode test (`cmpb $0x0,...` on percpu_enabled), which is taken for the
per-thread path and falls through for the per-CPU path.  Unconditional
jumps are followed; a path ends at `ret`.  Prints both counts and their
difference (issue 6: the per-CPU path may cost at most 8 more).
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


def walk(take_mode_branch):
    path, addr, prev = [], order[0], ""
    while len(path) < 200:
        text = ins[addr]
        op = text.split()[0]
        if not op.startswith("nop"):
            path.append(text)
        if op == "ret":
            return path
        if op == "jmp":
            addr = int(text.split()[1], 16)
        elif op.startswith("j") and prev.startswith("cmpb   $0x0") and take_mode_branch:
            addr = int(text.split()[1], 16)
        else:
            addr = order[order.index(addr) + 1]
        prev = text
    raise SystemExit("no ret found: GC_malloc's layout changed")


thread, cpu = walk(True), walk(False)
print(f"per-thread hit path: {len(thread)} instructions")
print(f"per-CPU hit path:    {len(cpu)} instructions")
print(f"difference:          {len(cpu) - len(thread)}")
