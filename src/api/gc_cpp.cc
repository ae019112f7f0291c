/*
 * libsgccpp: replaces the global operator new and delete, every form the
 * standard lets a program replace, so that memory from plain `new` is
 * uncollectable but scanned: an object the program allocates with `new`
 * (a std::vector's storage, a std::map's node, a struct of its own) keeps
 * the collected objects it points to alive until it is deleted.  bdwgc's
 * libgccpp does this for the plain, array and sized forms; the nothrow
 * and aligned forms are replaced here too, so that no `delete` ever meets
 * memory of another allocator, whichever form libstdc++ routes a call
 * through.
 *
 * Not part of libsgc (src/CMakeLists.txt builds .c files into it): a C
 * program must not have its operator new replaced by linking the collector.
 */
#include <stddef.h>
#include <stdint.h>

#include <new>

#include "gc_cpp.h"

void GC_throw_bad_alloc()
{
  throw std::bad_alloc();
}

namespace {

/* The standard's allocation loop: while no memory comes, the installed
 * new-handler may free some (and returns), throw, or uninstall itself;
 * with none installed the result is std::bad_alloc. */
void *allocate_traced(size_t size)
{
  if (size == 0) size = 1; /* a distinct, non-null pointer */
  for (;;) {
    if (void *p = GC_MALLOC_UNCOLLECTABLE(size)) return p;
    std::new_handler handler = std::get_new_handler();
    if (!handler) throw std::bad_alloc();
    handler();
  }
}

void *allocate_traced_nothrow(size_t size) noexcept
{
  try {
    return allocate_traced(size);
  } catch (...) {
    return nullptr;
  }
}

/* sgc's objects start on a 16-byte granule, enough for every fundamental
 * type.  A larger alignment is carved out of an object that much larger;
 * its start, which GC_FREE needs, is found again with GC_base. */
void *allocate_traced_aligned(size_t size, std::align_val_t alignment)
{
  size_t align = static_cast<size_t>(alignment);
  if (align <= alignof(max_align_t)) return allocate_traced(size);
  if (size == 0) size = 1; /* so that the result lies inside the object */
  if (size > SIZE_MAX - align) throw std::bad_alloc();
  uintptr_t start = reinterpret_cast<uintptr_t>(allocate_traced(size + align - alignof(max_align_t)));
  return reinterpret_cast<void *>((start + align - 1) & ~(uintptr_t)(align - 1));
}

void *allocate_traced_aligned_nothrow(size_t size, std::align_val_t alignment) noexcept
{
  try {
    return allocate_traced_aligned(size, alignment);
  } catch (...) {
    return nullptr;
  }
}

void free_traced(void *p) noexcept
{
  GC_FREE(p);
}

void free_traced_aligned(void *p) noexcept
{
  if (p) GC_FREE(GC_base(p));
}

} // namespace

void *operator new(size_t size) { return allocate_traced(size); }
void *operator new[](size_t size) { return allocate_traced(size); }
void *operator new(size_t size, const std::nothrow_t &) noexcept { return allocate_traced_nothrow(size); }
void *operator new[](size_t size, const std::nothrow_t &) noexcept { return allocate_traced_nothrow(size); }

void operator delete(void *p) noexcept { free_traced(p); }
void operator delete[](void *p) noexcept { free_traced(p); }
void operator delete(void *p, const std::nothrow_t &) noexcept { free_traced(p); }
void operator delete[](void *p, const std::nothrow_t &) noexcept { free_traced(p); }
void operator delete(void *p, size_t) noexcept { free_traced(p); }
void operator delete[](void *p, size_t) noexcept { free_traced(p); }

void *operator new(size_t size, std::align_val_t al) { return allocate_traced_aligned(size, al); }
void *operator new[](size_t size, std::align_val_t al) { return allocate_traced_aligned(size, al); }
void *operator new(size_t size, std::align_val_t al, const std::nothrow_t &) noexcept
{
  return allocate_traced_aligned_nothrow(size, al);
}
void *operator new[](size_t size, std::align_val_t al, const std::nothrow_t &) noexcept
{
  return allocate_traced_aligned_nothrow(size, al);
}

void operator delete(void *p, std::align_val_t) noexcept { free_traced_aligned(p); }
void operator delete[](void *p, std::align_val_t) noexcept { free_traced_aligned(p); }
void operator delete(void *p, std::align_val_t, const std::nothrow_t &) noexcept { free_traced_aligned(p); }
void operator delete[](void *p, std::align_val_t, const std::nothrow_t &) noexcept { free_traced_aligned(p); }
void operator delete(void *p, size_t, std::align_val_t) noexcept { free_traced_aligned(p); }
void operator delete[](void *p, size_t, std::align_val_t) noexcept { free_traced_aligned(p); }
