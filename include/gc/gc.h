/* <gc/gc.h> is where Debian's libgc-dev puts the bdwgc header too. */
#include "../gc.h"
