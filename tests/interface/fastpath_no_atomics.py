#!/usr/bin/env python3
"""fastpath_no_atomics.py LIBSGC

Issue 5 asks for no lock and no atomic read-modify-write on the object fast
path.  GC_malloc, GC_malloc_atomic and GC_free hold their fast paths inline
and leave for every slow case by a tail jump to a separate, never-inlined
function (alloc/alloc.c, alloc/free.c), so their own bodies are the fast
paths.  This disassembles those bodies and fails on any instruction that
locks or orders memory (a `lock` prefix, `xchg` with memory, which locks
implicitly, `mfence`) and on any `call` (a lock or an atomic could hide in
the callee).  A register-to-register `xchg` is a nop and is allowed.
"""
import re
import subprocess
import sys

FUNCTIONS = ["GC_malloc", "GC_malloc_atomic", "GC_free"]


def body(disassembly, name):
    start = disassembly.find(f"<{name}>:\n")
    if start < 0:
        sys.exit(f"FAIL [fastpath_no_atomics] {name} not found in the library")
    text = disassembly[start:]
    return text[: text.find("\n\n")].splitlines()[1:]


def offending(line):
    m = re.match(r"\s*[0-9a-f]+:\s+(.*)", line)
    if not m:
        return False
    ins = m.group(1).split("#")[0].strip()
    op = ins.split()[0] if ins else ""
    if op == "lock" or op.startswith("lock") or op == "mfence" or op.startswith("call"):
        return True
    return op.startswith("xchg") and "(" in ins


def main():
    lib = sys.argv[1]
    dis = subprocess.run(["objdump", "-d", "--no-show-raw-insn", lib], check=True,
                         capture_output=True, text=True).stdout
    bad = []
    for name in FUNCTIONS:
        lines = body(dis, name)
        if len(lines) < 8:
            bad.append(f"{name}: only {len(lines)} instructions, not a fast path")
        bad += [f"{name}: {l.strip()}" for l in lines if offending(l)]
    if bad:
        print("FAIL [fastpath_no_atomics] on the fast path:\n  " + "\n  ".join(bad))
        return 1
    print(f"[fastpath_no_atomics] ok: {', '.join(FUNCTIONS)} take no lock, "
          "no atomic read-modify-write and call nothing")
    return 0


if __name__ == "__main__":
    sys.exit(main())
