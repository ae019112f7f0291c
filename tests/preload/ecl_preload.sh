#!/bin/sh
# ecl_preload.sh LIBSGC
#
# A language runtime on bdwgc: Debian's ECL (Embeddable Common Lisp) links
# libgc.so.1 and uses tagged pointers (GC_register_displacement without
# interior pointers), GC_push_other_roots, GC_set_mark_bit and the start
# callback.  Run Lisp programs (allocation churn, a hash table of 100,000
# strings, four threads consing at once) with bdwgc and with LIBSGC
# preloaded in its place, also in torture mode and with 4 GC threads,
# and require identical output; SGC_STATS=1 must show that sgc collected
# (same_output in preload_common.sh).
#
# Exit 77 (ctest SKIP_RETURN_CODE) if ecl is not installed.
set -u
LIB=${1:?usage: ecl_preload.sh /path/to/libsgc.so}
TAG=ecl_preload
. "$(dirname "$0")/../lib/preload_common.sh"
ECL=$(find_program ecl) || exit 77

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
  same_output "$prog" 50 "$ECL" --norc --shell "$TMP/$prog.lisp"
done
echo "[ecl_preload] PASS"
