/* bdwgc's <gc/gc_pthread_redirects.h>: with GC_THREADS defined, gc.h
 * itself redirects pthread_create and the others to sgc's wrappers. */
#include "../gc.h"
#ifndef GC_PTHREAD_REDIRECTS_H
#define GC_PTHREAD_REDIRECTS_H /* bdwgc's guard */
#endif
