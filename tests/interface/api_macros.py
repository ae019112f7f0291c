#!/usr/bin/env python3
"""api_macros.py CC CXX SGC_INCLUDE_DIR

Every public macro of bdwgc's headers, as Debian's libgc-dev installs
them, must be defined by sgc's headers of the same names: a program
written for bdwgc that names one (GC_EXTRAS, GC_PTHREADS, GC_TMP_VERSION_*
...) then builds against sgc unchanged.  api_complete.py does this for
functions and variables.

The names are read from the installed headers at test time (every
"#define GC_..." in them), so a newer bdwgc is checked against too.  A
program is preprocessed with bdwgc's headers in each configuration below
(C and C++, with and without GC_THREADS and GC_DEBUG) to see which of
them bdwgc defines there; the same program then must compile against
sgc's headers with an "#ifndef NAME / #error" for each.  A name bdwgc's
headers mention but define in none of these configurations (another
platform's, or a switch the program sets) must be in NOT_CHECKED with
its reason, so that a new one is looked at.  Exits 77 (ctest's skip)
without bdwgc's headers.
"""
import os
import re
import subprocess
import sys
import tempfile

BDWGC_INCLUDE = "/usr/include/gc"
# The cord library's headers (libcord, not in Debian's libgc packages).
NOT_PROVIDED_HEADERS = {"cord.h", "cord_pos.h", "ec.h"}
C_HEADERS = ["gc.h", "gc_mark.h", "gc_typed.h", "gc_gcj.h", "gc_inline.h", "gc_disclaim.h",
             "javaxfc.h", "gc_backptr.h", "gc_version.h", "gc_tiny_fl.h",
             "gc_pthread_redirects.h", "gc_config_macros.h"]
CXX_HEADERS = C_HEADERS + ["gc_cpp.h", "gc_allocator.h"]
# (language, macros the program defines first, headers)
CONFIGS = [
    ("c", ["GC_THREADS"], C_HEADERS),
    ("c", [], C_HEADERS),
    ("c", ["GC_THREADS", "GC_DEBUG", "GC_REQUIRE_WCSDUP"], C_HEADERS + ["leak_detector.h"]),
    ("c++", ["GC_THREADS"], CXX_HEADERS),
    ("c++", ["GC_THREADS", "GC_DEBUG", "GC_NAMESPACE", "GC_INCLUDE_NEW"], CXX_HEADERS),
]

# Named in bdwgc's headers, defined by them in none of CONFIGS on Linux.
NOT_CHECKED = {
    # Other platforms' thread packages and Windows' DLL and thread calls;
    # sgc runs on Linux only.
    "GC_AIX_THREADS", "GC_DARWIN_THREADS", "GC_DGUX386_THREADS", "GC_FREEBSD_THREADS",
    "GC_HAIKU_THREADS", "GC_HPUX_THREADS", "GC_IRIX_THREADS", "GC_NETBSD_THREADS",
    "GC_OPENBSD_THREADS", "GC_OSF1_THREADS", "GC_RTEMS_PTHREADS", "GC_SOLARIS_THREADS",
    "GC_WIN32_THREADS", "GC_WIN32_SIZE_T", "GC_WINDOWS_H_INCLUDED", "GC_DLL", "GC_DllMain",
    "GC_CreateThread", "GC_ExitThread", "GC_use_DllMain",
    # Cygwin's and AIX's data segment bounds (GC_INIT_CONF_ROOTS uses them
    # there; sgc finds the data segments itself).
    "GC_DATASTART", "GC_DATAEND",
    # Where glibc's backtrace() is missing, bdwgc's debugging calls take the
    # caller's address too; on glibc they do not, in sgc as in bdwgc.
    "GC_ADD_CALLER", "GC_RETURN_ADDR", "GC_RETURN_ADDR_PARENT", "GC_HAVE_RETURN_ADDR_PARENT",
    # Switches the program (or another platform's header) defines: sgc's
    # headers honour them (gc.h, gc_cpp.h), but do not define them.
    "GC_NO_DLOPEN", "GC_NO_PTHREAD_CANCEL", "GC_NO_PTHREAD_SIGMASK", "GC_USE_LD_WRAP",
    "GC_NEW_ABORTS_ON_OOM", "GC_NO_OPERATOR_NEW_ARRAY", "GC_NO_MEMBER_TEMPLATES",
    # Amiga's allocation wrappers, and single-threaded bdwgc's macro forms
    # of calls sgc always exports as functions.
    "GC_malloc", "GC_malloc_atomic", "GC_malloc_uncollectable", "GC_malloc_atomic_uncollectable",
    "GC_malloc_ignore_off_page", "GC_malloc_atomic_ignore_off_page", "GC_realloc",
    "GC_alloc_lock", "GC_alloc_unlock", "GC_malloc_kind_global",
}


# bdwgc's override points: a program that defines them before including
# the headers keeps its own (a redefinition is an error under -Werror).
OVERRIDES = {
    "GC_API": "extern", "GC_CALL": "", "GC_CALLBACK": "", "GC_ATTR_MALLOC": "",
    "GC_ATTR_ALLOC_SIZE(n)": "", "GC_ATTR_CALLOC_SIZE(n, s)": "", "GC_ATTR_NONNULL(n)": "",
    "GC_ATTR_CONST": "", "GC_ATTR_DEPRECATED": "", "GC_PTHREAD_CREATE_CONST": "const",
    "GC_SUSPEND_THREAD_ID": "pthread_t", "GC_ASSERT(e)": "((void)0)", "GC_cdecl": "",
}
CXX_OVERRIDES = {"GC_NOEXCEPT": "throw()", "GC_ATTR_EXPLICIT": "explicit"}


def overrides_kept(tmp, sgc_include):
    """Whether sgc's headers build, warning-free, under the program's own
    definitions of every override point."""
    ok = True
    for lang, defs in (("c", OVERRIDES), ("c++", {**OVERRIDES, **CXX_OVERRIDES})):
        src = os.path.join(tmp, "overrides." + ("cc" if lang == "c++" else "c"))
        with open(src, "w") as f:
            f.write("#include <pthread.h>\n#define GC_THREADS 1\n")
            f.writelines(f"#define {k} {v}\n" for k, v in defs.items())
            f.writelines(f"#include <gc/{h}>\n" for h in (CXX_HEADERS if lang == "c++" else C_HEADERS))
        cc = CXX if lang == "c++" else CC
        build = subprocess.run([cc, "-fsyntax-only", "-Wall", "-Werror", f"-I{sgc_include}", src],
                               capture_output=True, text=True)
        if build.returncode != 0:
            print(f"FAIL [api_macros] {lang}: a program's own override points are not kept:")
            print(build.stderr[-3000:])
            ok = False
    return ok


def defined_by(lang, defines, headers, include_args, tmp):
    """The GC_ names the headers define in this configuration."""
    src = os.path.join(tmp, "probe." + ("cc" if lang == "c++" else "c"))
    with open(src, "w") as f:
        f.writelines(f"#define {d} 1\n" for d in defines)
        f.writelines(f"#include <gc/{h}>\n" for h in headers)
    cc = CXX if lang == "c++" else CC
    out = subprocess.run([cc, "-E", "-dM", *include_args, src], check=True, capture_output=True,
                         text=True).stdout
    return {m.group(1) for m in re.finditer(r"^#define (GC_\w+)", out, re.M)}


def mentioned():
    names = set()
    for h in os.listdir(BDWGC_INCLUDE):
        if h.endswith(".h") and h not in NOT_PROVIDED_HEADERS:
            with open(os.path.join(BDWGC_INCLUDE, h), errors="replace") as f:
                names |= set(re.findall(r"^\s*#\s*define\s+(GC_\w+)", f.read(), re.M))
    for h in ("gc.h", "gc_cpp.h"):  # Debian's top-level forwarding headers
        path = os.path.join(os.path.dirname(BDWGC_INCLUDE), h)
        if os.path.exists(path):
            with open(path, errors="replace") as f:
                names |= set(re.findall(r"^\s*#\s*define\s+(GC_\w+)", f.read(), re.M))
    return names


def main():
    global CC, CXX
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    CC, CXX, sgc_include = sys.argv[1:]
    if not os.path.exists(os.path.join(BDWGC_INCLUDE, "gc.h")):
        print("[api_macros] bdwgc's headers are not installed: skipped")
        sys.exit(77)
    status = 0
    checked = set()
    with tempfile.TemporaryDirectory() as tmp:
        for lang, defines, headers in CONFIGS:
            headers = [h for h in headers if os.path.exists(os.path.join(BDWGC_INCLUDE, h))]
            want = defined_by(lang, defines, headers, [], tmp) - NOT_CHECKED
            checked |= want
            src = os.path.join(tmp, "names." + ("cc" if lang == "c++" else "c"))
            with open(src, "w") as f:
                f.writelines(f"#define {d} 1\n" for d in defines)
                f.writelines(f"#include <gc/{h}>\n" for h in headers)
                for n in sorted(want):
                    f.write(f"#ifndef {n}\n#error missing {n}\n#endif\n")
                f.write("int main(void) { return 0; }\n" if lang == "c" else "int main() { return 0; }\n")
            cc = CXX if lang == "c++" else CC
            build = subprocess.run([cc, "-fsyntax-only", f"-I{sgc_include}", src],
                                   capture_output=True, text=True)
            label = f"{lang} with {' '.join(defines) or 'nothing'} defined"
            if build.returncode != 0:
                missing = sorted(set(re.findall(r"#error missing (GC_\w+)", build.stderr)))
                print(f"FAIL [api_macros] {label}: sgc's headers lack "
                      f"{' '.join(missing) if missing else 'nothing, but do not compile:'}")
                if not missing:
                    print(build.stderr[-3000:])
                status = 1
        if not overrides_kept(tmp, sgc_include):
            status = 1
        unclassified = sorted(mentioned() - checked - NOT_CHECKED)
        if unclassified:
            print("FAIL [api_macros] bdwgc's headers name macros neither checked nor listed in "
                  f"NOT_CHECKED: {' '.join(unclassified)}")
            status = 1
    if status == 0:
        print(f"[api_macros] all {len(checked)} macros bdwgc's headers define on Linux are "
              f"defined by sgc's ({len(NOT_CHECKED)} others listed with their reasons)")
    sys.exit(status)


if __name__ == "__main__":
    main()
