#!/usr/bin/env python3
"""api_complete.py CC SGC_INCLUDE_DIR LIBSGC

Every function and variable bdwgc's C headers declare (gc.h, gc_mark.h,
gc_typed.h, gc_gcj.h, gc_inline.h, gc_disclaim.h, javaxfc.h, as Debian's
libgc-dev installs them, with GC_THREADS defined) and its libgc.so.1
defines must be declared by sgc's headers of the same names and defined
by LIBSGC: a program written for bdwgc then compiles and links unchanged.
The list is read from the installed bdwgc at test time, so a newer bdwgc
is checked against too.  Every header bdwgc installs under gc/ must exist
in sgc's gc/ too, but for the few NOT_PROVIDED names.  Exits 77 (ctest's
skip) without bdwgc's headers.
"""
import os
import re
import subprocess
import sys
import tempfile

HEADERS = ["gc.h", "gc_mark.h", "gc_typed.h", "gc_gcj.h", "gc_inline.h", "gc_disclaim.h",
           "javaxfc.h"]
BDWGC_INCLUDE = "/usr/include/gc"
# bdwgc headers sgc leaves out, and why: the cord library (libcord, not in
# Debian's libgc packages).
NOT_PROVIDED = {"cord.h", "cord_pos.h", "ec.h"}


def declared_names(cc, tmp):
    """Names of the functions and variables bdwgc's headers declare."""
    src = os.path.join(tmp, "bdwgc_headers.c")
    with open(src, "w") as f:
        f.write("#define GC_THREADS 1\n")
        f.writelines(f"#include <gc/{h}>\n" for h in HEADERS)
    text = subprocess.run([cc, "-E", "-P", src], check=True, capture_output=True,
                          text=True).stdout
    attribute = re.compile(r"__attribute__\s*\(\((?:[^()]|\([^()]*\))*\)\)")
    names = set()
    for decl in text.split(";"):
        decl = attribute.sub("", " ".join(decl.split()))
        if not re.match(r"(?:.*\s)?extern\s", " " + decl):
            continue
        pointer_var = re.search(r"\(\s*\*\s*(GC_\w+)\s*\)", decl)
        function = re.search(r"\b(GC_\w+)\s*\(", decl)
        variable = re.search(r"\b(GC_\w+)\s*(?:\[[^\]]*\])?\s*$", decl)
        for m in (pointer_var, function, variable):
            if m:
                names.add(m.group(1))
                break
    return names


def exported(library):
    out = subprocess.run(["nm", "-D", "--defined-only", library], check=True,
                         capture_output=True, text=True).stdout
    return {line.split()[-1] for line in out.splitlines() if line.strip()}


def bdwgc_library():
    for d in ("/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib"):
        path = os.path.join(d, "libgc.so.1")
        if os.path.exists(path):
            return path
    return None


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    cc, sgc_include, libsgc = sys.argv[1:]
    libgc = bdwgc_library()
    if not os.path.exists(os.path.join(BDWGC_INCLUDE, "gc.h")) or not libgc:
        print("[api_complete] bdwgc's headers or library are not installed: skipped")
        sys.exit(77)
    with tempfile.TemporaryDirectory() as tmp:
        # Declared in bdwgc's headers and defined in its library: the API a
        # program can actually use (the headers also declare calls of other
        # builds, e.g. Windows or back-pointer ones).
        names = sorted(declared_names(cc, tmp) & exported(libgc))
        installed = sorted(h for h in os.listdir(BDWGC_INCLUDE) if h.endswith(".h"))
        missing_headers = [h for h in installed if h not in NOT_PROVIDED
                           and not os.path.exists(os.path.join(sgc_include, "gc", h))]
        if missing_headers:
            print(f"FAIL [api_complete] sgc has no gc/{', gc/'.join(missing_headers)}")
            sys.exit(1)
        src = os.path.join(tmp, "uses_all.c")
        with open(src, "w") as f:
            f.write("#define GC_THREADS 1\n")
            f.writelines(f"#include <gc/{h}>\n" for h in HEADERS)
            f.write("void *const every_name[] = {\n")
            f.writelines(f"  (void *)&{n},\n" for n in names)
            f.write("};\nint main(void) { return every_name[0] == 0; }\n")
        exe = os.path.join(tmp, "uses_all")
        build = subprocess.run(
            [cc, "-std=gnu11", "-Wno-deprecated-declarations", f"-I{sgc_include}", src, "-o", exe,
             libsgc, f"-Wl,-rpath,{os.path.dirname(os.path.abspath(libsgc))}", "-lpthread"],
            capture_output=True, text=True)
        if build.returncode != 0:
            undeclared = sorted(set(re.findall(r"'(GC_\w+)' undeclared|‘(GC_\w+)’ undeclared",
                                               build.stderr)))
            undefined = sorted(set(re.findall(r"undefined reference to [`'‘](GC_\w+)",
                                              build.stderr)))
            print("FAIL [api_complete] a program using all of bdwgc's API does not build:")
            if undeclared:
                print("  undeclared:", " ".join(a or b for a, b in undeclared))
            if undefined:
                print("  undefined:", " ".join(undefined))
            if not undeclared and not undefined:
                print(build.stderr[-4000:])
            sys.exit(1)
        run = subprocess.run([exe])
        if run.returncode != 0:
            print(f"FAIL [api_complete] the program exited with {run.returncode}")
            sys.exit(1)
        print(f"[api_complete] all {len(names)} functions and variables of bdwgc's "
              f"{len(HEADERS)} C headers are declared and defined by sgc; of its "
              f"{len(installed)} headers all but {', '.join(sorted(NOT_PROVIDED))} exist")


if __name__ == "__main__":
    main()
