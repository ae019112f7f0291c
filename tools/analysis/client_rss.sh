#!/bin/sh
# client_rss.sh [-n RUNS] LIBSGC CLIENT [SETTINGS...]
#
# Peak RSS of a Debian bdwgc client on libgc and with LIBSGC preloaded in
# its place (docs/behaviour.md, "Memory compared with bdwgc"). CLIENT is
# one of neko, ecl, stalin, asy; its workload is written to a temporary
# directory. Each SETTINGS argument ("SGC_EXTRA_BYTES=0", "SGC_PAGE_POLICY=ps
# GC_FREE_SPACE_DIVISOR=6") adds a row of sgc runs with those settings
# (LD_PRELOAD=... there runs another build of sgc).
# Every row is RUNS runs (default 3), taking turns; it prints the median
# peak RSS in KiB and its ratio to libgc's, and each row's last heap
# figures (bdwgc's GC_PRINT_STATS heap, sgc's SGC_STATS summary).
#
# The peak is GNU time's maximum resident set (the process tree's largest
# process), except for ecl, whose compile-file runs gcc: there the Lisp
# process reports its own VmHWM.
set -u
RUNS=3
if [ "${1:-}" = "-n" ]; then RUNS=$2; shift 2; fi
LIB=${1:?usage: client_rss.sh [-n RUNS] LIBSGC neko|ecl|stalin|asy [SETTINGS...]}
CLIENT=${2:?usage: client_rss.sh [-n RUNS] LIBSGC neko|ecl|stalin|asy [SETTINGS...]}
shift 2
case "$LIB" in /*) ;; *) LIB="$(pwd)/$LIB" ;; esac
[ -x /usr/bin/time ] || { echo "client_rss: GNU time (/usr/bin/time) is needed" >&2; exit 1; }
W=$(mktemp -d "${TMPDIR:-/tmp}/client_rss.XXXXXX")
trap 'rm -rf "$W"' EXIT INT TERM
cd "$W" || exit 1

# Each workload: a set-up that writes its input, and the command (run in $W).
case "$CLIENT" in
neko)
  # nekoc (a Neko program on the Neko VM) compiling 30 copies of a
  # binary-trees program with a string loop.
  command -v nekoc >/dev/null || { echo "client_rss: nekoc is not installed" >&2; exit 77; }
  for i in $(seq 1 30); do
    cat <<EOF
make$i = function(d) { if( d == 0 ) return \$array(null, null); return \$array(make$i(d - 1), make$i(d - 1)); }
check$i = function(t) { if( t[0] == null ) return 1; return 1 + check$i(t[0]) + check$i(t[1]); }
var long$i = make$i(16);
var d$i = 4;
while( d$i <= 16 ) {
  var n = 1 << (18 - d$i);
  var i = 0;
  var sum = 0;
  while( i < n ) { sum += check$i(make$i(d$i)); i += 1; }
  \$print(n, " trees of depth ", d$i, " check ", sum, "\\n");
  d$i += 2;
}
var acc$i = "";
var j$i = 0;
while( j$i < 20000 ) { acc$i = \$string(j$i) + ":" + \$string(j$i * 7); j$i += 1; }
\$print("long lived ", check$i(long$i), " last ", acc$i, "\\n");
EOF
  done >prog.neko
  COMMAND="nekoc prog.neko"
  ;;
ecl)
  command -v ecl >/dev/null || { echo "client_rss: ecl is not installed" >&2; exit 77; }
  for i in $(seq 1 10); do
    cat <<EOF
(defun fib$i (n) (if (< n 2) n (+ (fib$i (- n 1)) (fib$i (- n 2)))))
(defun churn$i (n)
  (let ((acc nil))
    (dotimes (i n) (push (make-list 20 :initial-element i) acc)
      (when (> (length acc) 1000) (setf acc nil)))
    (length acc)))
(defstruct point$i x y z)
(defun dist$i (a b) (sqrt (+ (expt (- (point$i-x a) (point$i-x b)) 2) (expt (- (point$i-y a) (point$i-y b)) 2))))
(defclass shape$i () ((name :initarg :name :accessor name$i)))
(defmethod area$i ((s shape$i)) 0)
EOF
  done >prog.lisp
  cat >run.lisp <<'EOF'
(compile-file "prog.lisp")
(with-open-file (s "/proc/self/status")
  (loop for line = (read-line s nil) while line
        when (and (> (length line) 5) (string= (subseq line 0 6) "VmHWM:"))
        do (format *error-output* "~a~%" line)))
(ext:quit 0)
EOF
  COMMAND="ecl --norc -load run.lisp"
  ;;
stalin)
  command -v stalin >/dev/null || { echo "client_rss: stalin is not installed" >&2; exit 77; }
  cat >prog.sc <<'EOF'
(define (fib n) (if (< n 2) n (+ (fib (- n 1)) (fib (- n 2)))))
(define (make-tree d) (if (= d 0) '() (cons (make-tree (- d 1)) (make-tree (- d 1)))))
(define (count t) (if (null? t) 1 (+ (count (car t)) (count (cdr t)))))
(display (fib 25)) (newline)
(display (count (make-tree 16))) (newline)
EOF
  COMMAND="stalin -On -c prog.sc"
  ;;
asy)
  command -v asy >/dev/null || { echo "client_rss: asy is not installed" >&2; exit 77; }
  cat >prog.asy <<'EOF'
size(10cm);
import graph;
real f(real x) {return sin(x)*exp(-x/10);}
for (int k = 0; k < 40; ++k) {
  path p = graph(new real(real x) {return f(x + k/10);}, 0, 30, 2000);
  draw(shift(0, k/5) * p, rgb(k/40, 0, 1 - k/40));
}
for (int i = 0; i < 200; ++i) dot((i % 20, floor(i / 20) / 2));
EOF
  COMMAND="asy -noV -f eps -o out prog.asy"
  ;;
*) echo "client_rss: unknown client $CLIENT (neko, ecl, stalin, asy)" >&2; exit 2 ;;
esac

# peak ROW: one run of row ROW (0: libgc; N: the Nth row of sgc), its
# peak RSS in KiB on stdout, its stderr kept in err.ROW.
peak() {
  if [ "$1" = 0 ]; then
    # shellcheck disable=SC2086
    /usr/bin/time -q -f %M -o rss env GC_PRINT_STATS=1 $COMMAND >/dev/null 2>"err.$1"
  else
    row_settings=$(sed -n "${1}p" settings | sed 's/^(defaults)$//')
    # shellcheck disable=SC2086
    /usr/bin/time -q -f %M -o rss env SGC_STATS=1 LD_PRELOAD="$LIB" $row_settings \
      $COMMAND >/dev/null 2>"err.$1"
  fi
  if [ "$CLIENT" = ecl ]; then
    awk '/^VmHWM:/ {print $2}' "err.$1" | tail -1
  else
    tail -1 rss
  fi
}

: >settings
echo "(defaults)" >>settings
for s in "$@"; do echo "$s" >>settings; done
ROWS=$(wc -l <settings)
for run in $(seq 1 "$RUNS"); do
  row=0
  while [ "$row" -le "$ROWS" ]; do
    peak "$row" >>"rss.$row"
    row=$((row + 1))
  done
done

median() { sort -n "$1" | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : int((v[NR / 2] + v[NR / 2 + 1]) / 2)}'; }
base=$(median rss.0)
echo "client_rss: $CLIENT: $COMMAND ($RUNS runs each; peak RSS median, KiB)"
printf '%-44s %9s %6s  %s\n' "row" "peak_KiB" "ratio" "heap (last run)"
printf '%-44s %9s %6s  %s\n' "libgc" "$base" "1.00" \
  "$(grep -o 'heap [0-9]* KiB' err.0 | tail -1)"
row=1
while [ "$row" -le "$ROWS" ]; do
  label="sgc $(sed -n "${row}p" settings | sed 's/^(defaults)$//')"
  m=$(median "rss.$row")
  printf '%-44s %9s %6s  %s\n' "$label" "$m" "$(awk -v a="$m" -v b="$base" 'BEGIN {printf "%.2f", a / b}')" \
    "$(grep -o 'heap [0-9.]* MiB (peak [0-9.]* MiB)\|live [0-9]* (max [0-9]*)' "err.$row" | tail -2 | tr '\n' ' ')"
  row=$((row + 1))
done
