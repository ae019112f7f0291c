/*
 * gc_allocator.h: standard-library allocators over sgc, with the names and
 * meaning of bdwgc 8.2's header of the same name.
 *
 *   gc_allocator<T>                  collected storage: a container whose
 *                                    object the collector can see (on the
 *                                    stack, static, inside a collected or
 *                                    traced object) keeps it, and what it
 *                                    points to, alive
 *   gc_allocator_ignore_off_page<T>  the same for large storage that is
 *                                    always referenced from near its start
 *                                    (GC_malloc_ignore_off_page)
 *   traceable_allocator<T>           uncollectable storage that is scanned:
 *                                    for containers the program frees
 *                                    itself, wherever their object lives
 *
 * gc_allocator's storage for a type declared pointer-free is not scanned:
 * the arithmetic types below are, and a program adds its own with
 * GC_DECLARE_PTRFREE(T) (at global scope).  Everything else is scanned.
 */
#ifndef SGC_GC_ALLOCATOR_H
#define SGC_GC_ALLOCATOR_H
#define GC_ALLOCATOR_H /* bdwgc's guard: programs test it */

#include <stddef.h>
#include <new>
#if __cplusplus >= 201103L
# include <utility> /* std::forward */
#endif

#include "gc.h"
#include "gc/sgc_cpp_oom.h"

/* bdwgc's name for what an allocator does when memory runs out. */
#if defined(GC_NEW_ABORTS_ON_OOM) || defined(_LIBCPP_NO_EXCEPTIONS) || \
    !(defined(__cpp_exceptions) || defined(__EXCEPTIONS))
#define GC_ALLOCATOR_THROW_OR_ABORT() GC_abort_on_oom()
#else
#define GC_ALLOCATOR_THROW_OR_ABORT() throw std::bad_alloc()
#endif


/* Which element types hold no pointers: GC_type_traits<T>'s member
 * GC_is_ptr_free has type GC_true_type for those, GC_false_type for the
 * rest.  The list is bdwgc's, so that a program declaring more of its own
 * declares none twice. */
struct GC_true_type {};
struct GC_false_type {};

template <class GC_Tp>
struct GC_type_traits {
  GC_false_type GC_is_ptr_free;
};

#define GC_DECLARE_PTRFREE(T) \
  template <> struct GC_type_traits<T> { GC_true_type GC_is_ptr_free; }

GC_DECLARE_PTRFREE(char);
GC_DECLARE_PTRFREE(signed char);
GC_DECLARE_PTRFREE(unsigned char);
GC_DECLARE_PTRFREE(signed short);
GC_DECLARE_PTRFREE(unsigned short);
GC_DECLARE_PTRFREE(signed int);
GC_DECLARE_PTRFREE(unsigned int);
GC_DECLARE_PTRFREE(signed long);
GC_DECLARE_PTRFREE(unsigned long);
GC_DECLARE_PTRFREE(float);
GC_DECLARE_PTRFREE(double);
GC_DECLARE_PTRFREE(long double);

/* Collected memory for N bytes: scanned, or not for a pointer-free type. */
inline void *GC_selective_alloc(size_t n, GC_false_type, bool ignore_off_page)
{
  return sgc_cpp::oom_checked(ignore_off_page ? GC_MALLOC_IGNORE_OFF_PAGE(n) : GC_MALLOC(n));
}

inline void *GC_selective_alloc(size_t n, GC_true_type, bool ignore_off_page)
{
  return sgc_cpp::oom_checked(ignore_off_page ? GC_MALLOC_ATOMIC_IGNORE_OFF_PAGE(n)
                                              : GC_MALLOC_ATOMIC(n));
}

namespace sgc_cpp {

/* What the three allocators share: the C++03 member types and helpers
 * (C++11 containers take what they need from std::allocator_traits, but
 * programs written for the old interface call these directly). */
template <class T>
class allocator_members {
public:
  typedef size_t size_type;
  typedef ptrdiff_t difference_type;
  typedef T *pointer;
  typedef const T *const_pointer;
  typedef T &reference;
  typedef const T &const_reference;
  typedef T value_type;

  pointer address(reference x) const { return &x; }
  const_pointer address(const_reference x) const { return &x; }
  size_type max_size() const GC_NOEXCEPT { return size_t(-1) / sizeof(T); }

#if __cplusplus >= 201103L
  template <class U, class... Args>
  void construct(U *p, Args &&...args) { ::new ((void *)p) U(std::forward<Args>(args)...); }
  template <class U>
  void destroy(U *p) { p->~U(); }
#else
  void construct(pointer p, const T &value) { ::new ((void *)p) T(value); }
  void destroy(pointer p) { p->~T(); }
#endif

  void deallocate(pointer p, size_type) GC_NOEXCEPT { GC_FREE(p); }

protected:
  /* The byte count, refusing a count whose bytes overflow size_t. */
  size_type bytes_for(size_type n) const
  {
    if (n > max_size()) oom_checked(0);
    return n * sizeof(T);
  }
};

/* The void specialisations name types only (bdwgc's keep them private;
 * here they are usable). */
struct void_allocator_members {
  typedef size_t size_type;
  typedef ptrdiff_t difference_type;
  typedef void *pointer;
  typedef const void *const_pointer;
  typedef void value_type;
};

} // namespace sgc_cpp

template <class GC_Tp>
class gc_allocator : public sgc_cpp::allocator_members<GC_Tp> {
public:
  template <class GC_Tp1> struct rebind { typedef gc_allocator<GC_Tp1> other; };

  gc_allocator() GC_NOEXCEPT {}
  gc_allocator(const gc_allocator &) GC_NOEXCEPT {}
  template <class GC_Tp1>
  gc_allocator(const gc_allocator<GC_Tp1> &) GC_NOEXCEPT {}

  /* N may be 0: the result is then a valid, distinct object. */
  GC_Tp *allocate(size_t n, const void * = 0)
  {
    GC_type_traits<GC_Tp> traits;
    return static_cast<GC_Tp *>(GC_selective_alloc(this->bytes_for(n), traits.GC_is_ptr_free, false));
  }
};

template <>
class gc_allocator<void> : public sgc_cpp::void_allocator_members {
public:
  template <class GC_Tp1> struct rebind { typedef gc_allocator<GC_Tp1> other; };
};

template <class GC_Tp>
class gc_allocator_ignore_off_page : public sgc_cpp::allocator_members<GC_Tp> {
public:
  template <class GC_Tp1> struct rebind { typedef gc_allocator_ignore_off_page<GC_Tp1> other; };

  gc_allocator_ignore_off_page() GC_NOEXCEPT {}
  gc_allocator_ignore_off_page(const gc_allocator_ignore_off_page &) GC_NOEXCEPT {}
  template <class GC_Tp1>
  gc_allocator_ignore_off_page(const gc_allocator_ignore_off_page<GC_Tp1> &) GC_NOEXCEPT {}

  GC_Tp *allocate(size_t n, const void * = 0)
  {
    GC_type_traits<GC_Tp> traits;
    return static_cast<GC_Tp *>(GC_selective_alloc(this->bytes_for(n), traits.GC_is_ptr_free, true));
  }
};

template <>
class gc_allocator_ignore_off_page<void> : public sgc_cpp::void_allocator_members {
public:
  template <class GC_Tp1> struct rebind { typedef gc_allocator_ignore_off_page<GC_Tp1> other; };
};

/* Scanned whatever the element type: a container the program manages
 * itself is rarely worth a second, pointer-free variant. */
template <class GC_Tp>
class traceable_allocator : public sgc_cpp::allocator_members<GC_Tp> {
public:
  template <class GC_Tp1> struct rebind { typedef traceable_allocator<GC_Tp1> other; };

  traceable_allocator() GC_NOEXCEPT {}
  traceable_allocator(const traceable_allocator &) GC_NOEXCEPT {}
  template <class GC_Tp1>
  traceable_allocator(const traceable_allocator<GC_Tp1> &) GC_NOEXCEPT {}

  GC_Tp *allocate(size_t n, const void * = 0)
  {
    return static_cast<GC_Tp *>(sgc_cpp::oom_checked(GC_MALLOC_UNCOLLECTABLE(this->bytes_for(n))));
  }
};

template <>
class traceable_allocator<void> : public sgc_cpp::void_allocator_members {
public:
  template <class GC_Tp1> struct rebind { typedef traceable_allocator<GC_Tp1> other; };
};

/* All allocators of one family share one heap: any frees what any other
 * allocated. */
template <class GC_T1, class GC_T2>
inline bool operator==(const gc_allocator<GC_T1> &, const gc_allocator<GC_T2> &) GC_NOEXCEPT
{
  return true;
}
template <class GC_T1, class GC_T2>
inline bool operator!=(const gc_allocator<GC_T1> &, const gc_allocator<GC_T2> &) GC_NOEXCEPT
{
  return false;
}
template <class GC_T1, class GC_T2>
inline bool operator==(const gc_allocator_ignore_off_page<GC_T1> &,
                       const gc_allocator_ignore_off_page<GC_T2> &) GC_NOEXCEPT
{
  return true;
}
template <class GC_T1, class GC_T2>
inline bool operator!=(const gc_allocator_ignore_off_page<GC_T1> &,
                       const gc_allocator_ignore_off_page<GC_T2> &) GC_NOEXCEPT
{
  return false;
}
template <class GC_T1, class GC_T2>
inline bool operator==(const traceable_allocator<GC_T1> &, const traceable_allocator<GC_T2> &) GC_NOEXCEPT
{
  return true;
}
template <class GC_T1, class GC_T2>
inline bool operator!=(const traceable_allocator<GC_T1> &, const traceable_allocator<GC_T2> &) GC_NOEXCEPT
{
  return false;
}

#endif /* SGC_GC_ALLOCATOR_H */
