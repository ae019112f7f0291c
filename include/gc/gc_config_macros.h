/* bdwgc's <gc/gc_config_macros.h>: sgc's gc.h defines what programs use
 * of it (GC_API, GC_CALL, GC_NOEXCEPT, GC_ATTR_*). */
#include "../gc.h"
