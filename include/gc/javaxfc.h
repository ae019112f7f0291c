/* bdwgc's <gc/javaxfc.h>: what a Java-like runtime needs beyond gc.h --
 * running every remaining finalizer at exit, and suspending one thread
 * at a time (Thread.suspend). */
#ifndef SGC_GC_JAVAXFC_H
#define SGC_GC_JAVAXFC_H
#define GC_JAVAXFC_H /* bdwgc's guard */
#include "../gc.h"
#ifdef __cplusplus
extern "C" {
#endif

/* Runs the finalizer of every object registered for finalization,
 * reachable or not, and of every one already queued (for a runtime's
 * exit).  The objects stay valid; their finalizers are then unregistered. */
GC_API void GC_finalize_all(void);

/* A thread's pthread_t, as bdwgc takes it (a program may define another
 * type of the same size first). */
#ifndef GC_SUSPEND_THREAD_ID
#define GC_SUSPEND_THREAD_ID pthread_t
#endif
/* Stops a registered thread until GC_resume_thread (a thread may suspend
 * itself; another must resume it).  No count: one resume undoes any
 * number of suspends.  Collections go on meanwhile and scan the stopped
 * thread.  Locks of the program's that it holds stay held.  An
 * unregistered thread is left alone. */
GC_API void GC_suspend_thread(GC_SUSPEND_THREAD_ID);
GC_API void GC_resume_thread(GC_SUSPEND_THREAD_ID);
GC_API int GC_is_thread_suspended(GC_SUSPEND_THREAD_ID);

#ifdef __cplusplus
}
#endif
#endif
