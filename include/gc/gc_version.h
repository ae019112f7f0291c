/* bdwgc's <gc/gc_version.h>: the bdwgc release whose API sgc provides
 * (programs test these to pick calls), and sgc's own version. */
#ifndef SGC_GC_VERSION_H
#define SGC_GC_VERSION_H

#define GC_VERSION_MAJOR 8
#define GC_VERSION_MINOR 2
#define GC_VERSION_MICRO 2
#define SGC_VERSION_STRING "0.1.0"

#endif
