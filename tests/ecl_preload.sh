#!/bin/sh
# ecl_preload.sh LIBSGC
#
# A language runtime on bdwgc: Debian's ECL (Embeddable Common Lisp) links
# libgc.so.1 and uses tagged pointers (GC_register_displacement without
# interior pointers), GC_push_other_roots, GC_set_mark_bit and the start
# callback.  Run Lisp programs (allocation churn, a hash table of 100,000
# strings, four threads consing at once) with bdwgc and with LIBSGC
# preloaded in its place, the latter also in torture mode, and require
# identical output; SGC_STATS=1 must show that sgc collected.
#
# Exit 77 (ctest SKIP_RETURN_CODE) if ecl is not installed.
set -u
LIB=${1:?usage: ecl_preload.sh /path/to/libsgc.so}
ECL=$(command -v ecl 2>/dev/null || true)
if [ -z "$ECL" ]; then
  echo "[ecl_preload] SKIP: ecl is not installed"
  exit 77
fi
case "$LIB" in /*) ;; *) LIB="$(pwd)/$LIB" ;; esac
TMP=$(mktemp -d "${TMPDIR:-/tmp}/ecltest.XXXXXX")
trap 'rm -rf "$TMP"' EXIT INT TERM
fail() { echo "FAIL [ecl_preload] $*"; exit 1; }

cat >"$TMP/serial.lisp" <<'LISP'
(defun fib (n) (if (< n 2) n (+ (fib (- n 1)) (fib (- n 2)))))
(defun churn (n)
  (let ((acc nil))
    (dotimes (i n)
      (push (make-list 20 :initial-element i) acc)
      (when (> (length acc) 1000) (setf acc nil)))
    (length acc)))
(format t "fib ~a~%" (fib 24))
(format t "churn ~a~%" (churn 200000))
(let ((h (make-hash-table)))
  (dotimes (i 100000) (setf (gethash i h) (format nil "v~a" i)))
  (si:gc t)
  (let ((sum 0))
    (dotimes (i 100000) (incf sum (length (gethash i h))))
    (format t "hash ~a ~a ~a~%" (hash-table-count h) (gethash 77777 h) sum)))
(format t "strings ~a~%"
        (length (apply #'concatenate 'string (loop for i below 2000 collect (princ-to-string i)))))
LISP
cat >"$TMP/threads.lisp" <<'LISP'
(defun worker (k)
  (let ((acc nil))
    (dotimes (i 50000)
      (push (list k i (make-string 10 :initial-element #\a)) acc)
      (when (> (length acc) 500) (setf acc (subseq acc 0 10))))
    (reduce #'+ (mapcar #'second acc))))
(let ((threads (loop for k below 4
                     collect (let ((k k))
                               (mp:process-run-function (format nil "w~a" k)
                                                        (lambda () (worker k)))))))
  (format t "results ~a~%" (mapcar #'mp:process-join threads)))
LISP

for prog in serial threads; do
  "$ECL" --norc --shell "$TMP/$prog.lisp" >"$TMP/$prog.bdwgc" 2>&1 || fail "$prog with bdwgc: exit $?"
  SGC_STATS=1 LD_PRELOAD="$LIB" "$ECL" --norc --shell "$TMP/$prog.lisp" >"$TMP/$prog.sgc" 2>"$TMP/$prog.err" ||
    fail "$prog with sgc: exit $?: $(tail -3 "$TMP/$prog.err")"
  cmp -s "$TMP/$prog.bdwgc" "$TMP/$prog.sgc" || fail "$prog: output differs: $(diff "$TMP/$prog.bdwgc" "$TMP/$prog.sgc" | head -5)"
  grep -q "^sgc: [1-9][0-9]* collections" "$TMP/$prog.err" || fail "$prog: sgc did not collect: $(cat "$TMP/$prog.err")"
  SGC_TORTURE=50 LD_PRELOAD="$LIB" "$ECL" --norc --shell "$TMP/$prog.lisp" >"$TMP/$prog.torture" 2>&1 ||
    fail "$prog in torture mode: exit $?"
  cmp -s "$TMP/$prog.bdwgc" "$TMP/$prog.torture" || fail "$prog in torture mode: output differs"
  echo "[ecl_preload] $prog: identical output ($(head -1 "$TMP/$prog.err"))"
done
echo "[ecl_preload] PASS"
