/* gc_cpp.h's and gc_allocator.h's shared part: a null result from the
 * collector is out of memory, and C++ wants an exception.  Without
 * exceptions (-fno-exceptions, or bdwgc's GC_NEW_ABORTS_ON_OOM) the
 * process stops with the collector's message instead. */
#ifndef SGC_CPP_OOM_H
#define SGC_CPP_OOM_H

#include <new>

#include "../gc.h"

namespace sgc_cpp {
inline void *oom_checked(void *obj)
{
#if (defined(__cpp_exceptions) || defined(__EXCEPTIONS)) && !defined(GC_NEW_ABORTS_ON_OOM)
  if (!obj) throw std::bad_alloc();
#else
  if (!obj) GC_abort_on_oom();
#endif
  return obj;
}
} // namespace sgc_cpp

#endif
