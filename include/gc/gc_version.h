/* bdwgc's <gc/gc_version.h>: the bdwgc release whose API sgc provides
 * (programs and build scripts test these to pick calls), and sgc's own
 * version.  The GC_TMP_ names are the ones build scripts grep for. */
#ifndef SGC_GC_VERSION_H
#define SGC_GC_VERSION_H

#define GC_TMP_VERSION_MAJOR 8
#define GC_TMP_VERSION_MINOR 2
#define GC_TMP_VERSION_MICRO 2 /* 8.2.2 */
#ifndef GC_VERSION_MAJOR
#define GC_VERSION_MAJOR GC_TMP_VERSION_MAJOR
#define GC_VERSION_MINOR GC_TMP_VERSION_MINOR
#define GC_VERSION_MICRO GC_TMP_VERSION_MICRO
#endif
#define SGC_VERSION_STRING "0.1.0"

#endif
