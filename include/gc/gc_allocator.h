/* <gc/gc_allocator.h> is where Debian's libgc-dev puts the bdwgc header
 * (and its only place there). */
#include "../gc_allocator.h"
