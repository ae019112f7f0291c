/* <gc/gc_cpp.h> is where Debian's libgc-dev puts the bdwgc header too. */
#include "../gc_cpp.h"
