#!/bin/sh
# guile_preload.sh LIBSGC
#
# A language runtime built on bdwgc's extension API: Debian's Guile 3.0
# allocates through GC_generic_malloc_many into its own inline free lists,
# makes object kinds with mark procedures (GC_new_kind, GC_new_proc) for
# its threads, which mark their VM stacks with GC_MARK_AND_PUSH, and keeps
# weak-table keys in words its typed objects' descriptors leave out.  Run
# Scheme programs -- allocation churn, hash tables, bignums, vectors; weak
# key and weak value tables whose dead entries must disappear while live
# ones stay, and a guardian; four threads and par-map; Guile's compiler
# compiling a file, its output checksummed -- with bdwgc and with LIBSGC
# preloaded (plainly, in torture mode, with 4 GC threads), and require
# identical output.
#
# Exit 77 (ctest SKIP_RETURN_CODE) if guile-3.0 is not installed.
set -u
LIB=${1:?usage: guile_preload.sh /path/to/libsgc.so}
TAG=guile_preload
. "$(dirname "$0")/../lib/preload_common.sh"
GUILE=$(find_program guile-3.0 guile) || exit 77

cat >"$TMP/serial.scm" <<'SCM'
(use-modules (srfi srfi-1))
(define (fib n) (if (< n 2) n (+ (fib (- n 1)) (fib (- n 2)))))
(format #t "fib ~a~%" (fib 25))
(define (churn n)
  (let loop ((i 0) (acc '()))
    (if (= i n) (length acc)
        (loop (+ i 1) (if (> (length acc) 1000) '() (cons (make-list 20 i) acc))))))
(format #t "churn ~a~%" (churn 200000))
(define h (make-hash-table))
(do ((i 0 (+ i 1))) ((= i 100000)) (hash-set! h i (format #f "v~a" i)))
(gc)
(format #t "hash ~a ~a ~a~%" (hash-count (const #t) h) (hash-ref h 77777)
        (fold + 0 (map (lambda (i) (string-length (hash-ref h i))) (iota 100000))))
(format #t "bignum ~a~%" (modulo (expt 7 20000) 1000007))
(format #t "sort ~a~%" (take (sort (map (lambda (i) (modulo (* i 7919) 100003)) (iota 200000)) <) 5))
(define v (make-vector 100000 #f))
(do ((i 0 (+ i 1))) ((= i 100000)) (vector-set! v i (list i (number->string i))))
(format #t "vector ~a~%" (apply + (map (lambda (i) (car (vector-ref v i))) (iota 100000))))
(format #t "strings ~a~%" (string-length (apply string-append (map number->string (iota 20000)))))
SCM
cat >"$TMP/weak.scm" <<'SCM'
(define (entries t) (hash-fold (lambda (k v n) (+ n 1)) 0 t))
(define t (make-weak-key-hash-table))
(define kept (map (lambda (i) (list i)) (iota 2000)))
(for-each (lambda (k) (hash-set! t k (car k))) kept)
(do ((i 0 (+ i 1))) ((= i 200000)) (hash-set! t (list i 'garbage) i))
(gc) (gc)
(format #t "live keys found ~a~%" (length (filter (lambda (k) (eqv? (hash-ref t k) (car k))) kept)))
(format #t "dead keys mostly gone ~a~%" (< (entries t) 100000))
(define vt (make-weak-value-hash-table))
(for-each (lambda (k) (hash-set! vt (car k) k)) kept)
(do ((i 0 (+ i 1))) ((= i 200000)) (hash-set! vt (+ 10000 i) (list i)))
(gc) (gc)
(format #t "live values found ~a~%" (length (filter (lambda (k) (eq? (hash-ref vt (car k)) k)) kept)))
(format #t "dead values mostly gone ~a~%" (< (entries vt) 100000))
(define g (make-guardian))
(do ((i 0 (+ i 1))) ((= i 1000)) (g (list 'x i)))
(gc) (gc)
(format #t "guardian returned most ~a~%" (let loop ((n 0)) (if (g) (loop (+ n 1)) (> n 500))))
SCM
cat >"$TMP/threads.scm" <<'SCM'
(use-modules (ice-9 threads) (srfi srfi-1))
(define (worker k)
  (let loop ((i 0) (acc '()))
    (if (= i 100000) (apply + (map cadr (take acc 10)))
        (loop (+ i 1) (let ((a (cons (list k i (make-string 10 #\a)) acc)))
                        (if (> (length a) 500) (take a 10) a))))))
(define threads (map (lambda (k) (call-with-new-thread (lambda () (worker k)))) (iota 4)))
(format #t "results ~a~%" (map join-thread threads))
(format #t "par-map ~a~%" (apply + (par-map (lambda (i) (length (iota (* 1000 i)))) (iota 40))))
SCM
cat >"$TMP/compile.scm" <<'SCM'
(use-modules (system base compile) (ice-9 binary-ports) (rnrs bytevectors))
(define out (string-append (cadr (command-line)) ".go"))
(compile-file (cadr (command-line)) #:output-file out)
(define bv (call-with-input-file out get-bytevector-all #:binary #t))
(format #t "compiled ~a bytes, checksum ~a~%" (bytevector-length bv)
        (let loop ((i 0) (sum 0))
          (if (= i (bytevector-length bv)) sum
              (loop (+ i 1) (modulo (+ (* sum 31) (bytevector-u8-ref bv i)) 1000000007)))))
SCM

for prog in serial weak threads; do
  same_output "$prog" 50 "$GUILE" --no-auto-compile "$TMP/$prog.scm"
done
same_output compile 50 "$GUILE" --no-auto-compile "$TMP/compile.scm" "$TMP/serial.scm"
echo "[guile_preload] PASS"
