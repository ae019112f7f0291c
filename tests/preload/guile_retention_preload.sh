#!/bin/sh
# guile_retention_preload.sh LIBSGC
#
# What a Guile program drops, sgc reclaims as often as bdwgc does: the
# shapes of the Guile 3.0 checks that were UNRESOLVED or failed with sgc
# preloaded (issue 58): objects given to guardians and dropped, then (gc)
# (guardians.test: re-guarding, guarding twice in one guardian and in
# two, a guarded element of a weak vector returned and then removed);
# a thousand modules no longer referenced (gc.test "Unused modules are
# removed"); a locked mutex whose owner thread has exited, and one the
# main thread holds (threads.test, bug #27450).  Each shape runs once
# per process, as Guile's suite runs a test file, in RUNS processes with
# bdwgc and with LIBSGC preloaded (plainly and with 4 GC threads).  A
# shape may fail now and then on either collector (a stale word on the
# stack is a false root to both); sgc must pass each at least as often as
# bdwgc, less SLACK runs.  The counts are printed.
#
# Exit 77 (ctest SKIP_RETURN_CODE) if guile-3.0 is not installed.
set -u
LIB=${1:?usage: guile_retention_preload.sh /path/to/libsgc.so}
TAG=guile_retention
RUNS=${GUILE_RETENTION_RUNS:-12}
SLACK=${GUILE_RETENTION_SLACK:-2}
. "$(dirname "$0")/../lib/preload_common.sh"
GUILE=$(find_program guile-3.0 guile) || exit 77

cat >"$TMP/shapes.scm" <<'SCM'
(use-modules (ice-9 weak-vector) (ice-9 threads))
;; Overwrites dead stack with a deep non-tail loop, as Guile's suite does
;; before its (gc) (clear-stale-stack-references).
(define (clear-stale-stack-references)
  (let loop ((i 20000) (dummy '(foo)))
    (and (> i 0) (loop (1- i) (cdr (cons i dummy))))))
;; (gc) runs the finalizers it queued, but Guile's finalizer thread, woken
;; by the collector's notifier, may have taken one and still be running
;; it when (gc) returns: a guardian then looks empty on either collector.
;; A pause lets it finish: the race is Guile's, retention is the point.
(define (gc*) (gc) (usleep 10000))
(define (pair-returned? g) (and=> (g) (lambda (o) (equal? o (cons #f #f)))))
(define shapes
  (list
   (cons "re-guarding"
    (lambda ()
      (let ((g (make-guardian)))
        (gc*) (g (cons #f #f)) (cons 'clear 'stack)
        (and (not (g)) (begin (gc*) #t)
             (let ((p (g)))
               (and (equal? p (cons #f #f))
                    (begin (g p) (set! p #f) (gc*) (pair-returned? g))
                    (not (g))))))))
   (cons "twice-one-guardian"
    (lambda ()
      (let ((g (make-guardian)))
        (gc*)
        (let ((p (cons #f #f))) (g p) (g p) (set! p #f))
        (and (not (g)) (begin (gc*) (pair-returned? g)) (pair-returned? g)))))
   (cons "twice-two-guardians"
    (lambda ()
      (let ((g (make-guardian)) (h (make-guardian)))
        (gc*)
        (let ((p (cons #f #f))) (g p) (h p) (set! p #f))
        (and (not (g)) (begin (gc*) (pair-returned? g)) (pair-returned? h)))))
   (cons "weak-vector-returned"
    (lambda ()
      (let ((g (make-guardian)) (v (make-weak-vector 1 #f)))
        (gc*)
        (let ((p (cons #f #f))) (g p) (weak-vector-set! v 0 p) (set! p #f))
        (and (not (g)) (begin (gc*) (pair-returned? g)) (not (g))))))
   (cons "weak-vector-removed"
    (lambda ()
      (let ((g (make-guardian)) (v (make-weak-vector 1 #f)))
        (gc*)
        (let ((p (cons #f #f))) (g p) (weak-vector-set! v 0 p) (set! p #f))
        (gc*)
        (and (pair-returned? g) (begin (gc*) (not (weak-vector-ref v 0)))))))
   (cons "unused-modules"
    (lambda ()
      (let ((guard (make-guardian)) (total 1000))
        (for-each (lambda (x) (guard (make-module))) (iota total))
        (clear-stale-stack-references)
        (gc*) (gc*) (gc*)
        (= (let lp ((i 0)) (if (guard) (lp (1+ i)) i)) total))))
   (cons "mutex-owner-exited"
    (lambda ()
      (let ((g (make-guardian)))
        (g (let ((m (make-mutex)))
             (join-thread (call-with-new-thread (lambda () (lock-mutex m))))
             m))
        (clear-stale-stack-references)
        (gc*) (gc*)
        (mutex? (g)))))
   (cons "mutex-owner-self"
    (lambda ()
      (let ((g (make-guardian)))
        (g (let ((m (make-mutex))) (lock-mutex m) m))
        (clear-stale-stack-references)
        (gc*) (gc*)
        (let ((m (g))) (and (mutex? m) (eq? (mutex-owner m) (current-thread)))))))))
(for-each
 (lambda (s)
   (format #t "~a ~a~%" (car s) (if (eq? (catch #t (cdr s) (lambda _ #f)) #t) 1 0)))
 shapes)
SCM

# tally NAME ENV...: RUNS processes of the shapes, their passes per shape
# summed into $TMP/NAME ("shape passes" lines).
tally() {
  name=$1
  shift
  : >"$TMP/$name.runs"
  i=0
  while [ $i -lt "$RUNS" ]; do
    watched "$name run $i" "$TMP/$name.out" "$TMP/$name.err" "$@" \
      "$GUILE" --no-auto-compile "$TMP/shapes.scm" ||
      fail "$name run $i: exit $?: $(tail -3 "$TMP/$name.err")"
    cat "$TMP/$name.out" >>"$TMP/$name.runs"
    i=$((i + 1))
  done
  awk '{n[$1] += $2} END {for (k in n) print k, n[k]}' "$TMP/$name.runs" | sort >"$TMP/$name"
}

tally bdwgc
tally sgc LD_PRELOAD="$LIB"
tally sgc_markers4 LD_PRELOAD="$LIB" SGC_MARKERS=4 SGC_ADAPTIVE=0
echo "[$TAG] passes of $RUNS runs per shape: bdwgc, sgc, sgc with 4 GC threads"
join "$TMP/bdwgc" "$TMP/sgc" | join - "$TMP/sgc_markers4" >"$TMP/table"
sed 's/^/  /' "$TMP/table"
[ "$(wc -l <"$TMP/table")" -eq 8 ] || fail "not every shape reported: $(cat "$TMP/bdwgc.runs")"
awk -v slack="$SLACK" '$3 < $2 - slack || $4 < $2 - slack {print; bad = 1} END {exit bad}' \
  "$TMP/table" >"$TMP/worse" || fail "sgc reclaims less often than bdwgc: $(cat "$TMP/worse")"
echo "[$TAG] PASS"
