/*
 * gc_cpp.h: sgc's C++ interface, with the names and meaning of bdwgc
 * 8.2's header of the same name, so that a C++ program written for bdwgc
 * compiles unchanged.
 *
 *   class A : public gc { ... };       new A        collected
 *   class B : public gc_cleanup {...}; new B        collected; ~B() runs as
 *                                                   its finalizer
 *   new (NoGC) A                       uncollectable (traced); delete it
 *   new (PointerFreeGC) char[n]        collected, never scanned for pointers
 *   ::new (UseGC, fn, data) T          collected; fn(obj, data) runs when it
 *                                      becomes unreachable (not ~T)
 *
 * Everything here is inline over gc.h, so a program that uses only this
 * header needs no more than -lsgc.  Plain `new` (memory that is neither
 * collected nor scanned by default) becomes uncollectable but scanned once
 * the program links libsgccpp (-lsgccpp -lsgc), as libgccpp does for bdwgc.
 *
 * As with bdwgc: a collected array of gc_cleanup objects gets only one
 * destructor call (the finalizer knows one object); `delete` of an object
 * given a cleanup function by placement is an error; finalizers run as
 * gc.h says (GC_invoke_finalizers, or on allocation unless
 * GC_finalize_on_demand).
 */
#ifndef SGC_GC_CPP_H
#define SGC_GC_CPP_H
#define GC_CPP_H /* bdwgc's guard: programs test it */

#include <stddef.h>
#include <new>

#include "gc.h"
#include "gc/sgc_cpp_oom.h"


/* GC_NAMESPACE puts this header's names in namespace boehmgc, as bdwgc;
 * GC_NS_QUALIFY(name) names them either way. */
#ifdef GC_NAMESPACE
# define GC_NS_QUALIFY(T) boehmgc::T
#else
# define GC_NS_QUALIFY(T) T
#endif

#ifndef GC_cdecl
# define GC_cdecl GC_CALLBACK
#endif

/* Defined in libsgccpp (as in bdwgc's libgccpp): throws std::bad_alloc. */
GC_API void GC_CALL GC_throw_bad_alloc();

/* bdwgc's switches, which programs test: this header declares array and
 * placement forms of new and delete (GC_NO_OPERATOR_NEW_ARRAY declined
 * arrays on old compilers; sgc declares them all the same). */
#ifndef GC_NO_OPERATOR_NEW_ARRAY
#define GC_OPERATOR_NEW_ARRAY
#endif
#define GC_PLACEMENT_DELETE
/* What a program's own operator new does with a null result, as this
 * header's do: abort, or throw std::bad_alloc. */
#if defined(GC_NEW_ABORTS_ON_OOM) || defined(_LIBCPP_NO_EXCEPTIONS) || \
    !(defined(__cpp_exceptions) || defined(__EXCEPTIONS))
#define GC_OP_NEW_OOM_CHECK(obj) \
  do {                           \
    if (!(obj)) GC_abort_on_oom(); \
  } while (0)
#else
#define GC_OP_NEW_OOM_CHECK(obj) \
  if (obj) {                     \
  } else                         \
    throw std::bad_alloc()
#endif


#ifdef GC_NAMESPACE
namespace boehmgc {
#endif

/* Where a `new` with placement puts the object.  bdwgc offers
 * PointerFreeNoGC only when GC_ATOMIC_UNCOLLECTABLE is defined. */
enum GCPlacement {
  UseGC, /* collected and scanned */
#ifndef GC_NAME_CONFLICT
  GC = UseGC, /* the old name; GC_NAME_CONFLICT hides it */
#endif
  NoGC,         /* uncollectable, scanned */
  PointerFreeGC /* collected, not scanned */
#ifdef GC_ATOMIC_UNCOLLECTABLE
  , PointerFreeNoGC /* uncollectable, not scanned */
#endif
};

extern "C" {
typedef void (GC_CALLBACK *GCCleanUpFunc)(void *obj, void *clientData);
}

/* Objects of classes derived from gc are collected unless placed
 * otherwise; its operator new(size, placement) also serves the global
 * placement forms below.  The placement deletes run only when a
 * constructor throws. */
class gc {
public:
  void *operator new(size_t size) { return sgc_cpp::oom_checked(GC_MALLOC(size)); }
  void *operator new(size_t size, GCPlacement gcp)
  {
    switch (gcp) {
    case UseGC:
      return sgc_cpp::oom_checked(GC_MALLOC(size));
    case PointerFreeGC:
      return sgc_cpp::oom_checked(GC_MALLOC_ATOMIC(size));
#ifdef GC_ATOMIC_UNCOLLECTABLE
    case PointerFreeNoGC:
      return sgc_cpp::oom_checked(GC_MALLOC_ATOMIC_UNCOLLECTABLE(size));
#endif
    case NoGC:
    default: /* a value no enumerator names: the choice that frees nothing */
      return sgc_cpp::oom_checked(GC_MALLOC_UNCOLLECTABLE(size));
    }
  }
  /* Declaring any operator new here hides the global placement form. */
  void *operator new(size_t, void *p) GC_NOEXCEPT { return p; }
  void operator delete(void *obj) GC_NOEXCEPT { GC_FREE(obj); }
  void operator delete(void *obj, GCPlacement) GC_NOEXCEPT { GC_FREE(obj); }
  void operator delete(void *, void *) GC_NOEXCEPT {}

  void *operator new[](size_t size) { return gc::operator new(size); }
  void *operator new[](size_t size, GCPlacement gcp) { return gc::operator new(size, gcp); }
  void *operator new[](size_t, void *p) GC_NOEXCEPT { return p; }
  void operator delete[](void *obj) GC_NOEXCEPT { GC_FREE(obj); }
  void operator delete[](void *obj, GCPlacement) GC_NOEXCEPT { GC_FREE(obj); }
  void operator delete[](void *, void *) GC_NOEXCEPT {}
};

/* A collected object derived from gc_cleanup (or holding a member that
 * is) has its destructors run by the collector once it is unreachable;
 * an explicit delete runs them at once and cancels that. */
class gc_cleanup : virtual public gc {
public:
  gc_cleanup()
  {
    void *base = GC_base(this);
    if (!base) return; /* on the stack, static, or in malloc's heap */
    /* The finalizer gets the object's start; the offset finds this
     * subobject again, which need not be at the start. */
    void *offset = (void *)((char *)this - (char *)base);
    GC_finalization_proc old_fn = 0;
    void *old_data = 0;
    GC_register_finalizer_ignore_self(base, run_destructor, offset, &old_fn, &old_data);
    /* A member's constructor runs after the enclosing object's: the
     * outermost registration (whose destructor destroys the members too)
     * is the one to keep. */
    if (old_fn) GC_register_finalizer_ignore_self(base, old_fn, old_data, 0, 0);
  }
  virtual ~gc_cleanup()
  {
    /* Run by delete, by a scope's end, or by the finalizer itself: in
     * every case no later finalizer may run it again. */
    void *base = GC_base(this);
    if (base) GC_register_finalizer_ignore_self(base, 0, 0, 0, 0);
  }

private:
  static void GC_cdecl run_destructor(void *base, void *offset)
  {
    ((gc_cleanup *)((char *)base + (ptrdiff_t)offset))->~gc_cleanup();
  }
};

#ifdef GC_NAMESPACE
} // namespace boehmgc
#endif

/* Any type, placed by GCPlacement; for UseGC a non-null cleanup function
 * is registered as the object's finalizer (ignoring self-references), to
 * run in place of its destructor.  A cleanup with another placement is
 * ignored (bdwgc calls it an error). */
inline void *operator new(size_t size, GC_NS_QUALIFY(GCPlacement) gcp,
                          GC_NS_QUALIFY(GCCleanUpFunc) cleanup = 0, void *clientData = 0)
{
  void *obj = GC_NS_QUALIFY(gc)::operator new(size, gcp);
  if (cleanup && gcp == GC_NS_QUALIFY(UseGC))
    GC_REGISTER_FINALIZER_IGNORE_SELF(obj, cleanup, clientData, 0, 0);
  return obj;
}

inline void *operator new[](size_t size, GC_NS_QUALIFY(GCPlacement) gcp,
                            GC_NS_QUALIFY(GCCleanUpFunc) cleanup = 0, void *clientData = 0)
{
  return ::operator new(size, gcp, cleanup, clientData);
}

/* For a constructor that throws. */
inline void operator delete(void *obj, GC_NS_QUALIFY(GCPlacement), GC_NS_QUALIFY(GCCleanUpFunc),
                            void *) GC_NOEXCEPT
{
  GC_FREE(obj);
}

inline void operator delete[](void *obj, GC_NS_QUALIFY(GCPlacement), GC_NS_QUALIFY(GCCleanUpFunc),
                              void *) GC_NOEXCEPT
{
  GC_FREE(obj);
}

#endif /* SGC_GC_CPP_H */
