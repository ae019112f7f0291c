/* The heap: chunks of pages, their headers with the mark bits, the page
 * map.
 *
 * Page headers and mark bits live outside the object memory (thesis
 * §2.2.1), in a chunk's descriptor mapping, each page's mark words inside
 * its header.  Balancing mark bitmaps over memory nodes (BMB, §3.4.3)
 * spreads the descriptor mappings (heap/placement.c). */
#ifndef SGC_HEAP_H
#define SGC_HEAP_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "heap/layout.h"

enum page_state {
  PAGE_FREE = 0,       /* in the free-page pool */
  PAGE_SMALL = 1,      /* objects of one size class */
  PAGE_LARGE_HEAD = 2, /* first page of a large object */
  PAGE_LARGE_TAIL = 3, /* other pages of a large object */
  PAGE_RESERVED = 4,   /* free, held in a thread's page store (AL, LPS) */
};

enum page_flags {
  /* May hold non-zero bytes (written since it came from the OS or was
   * released).  Clear on a fresh page: a header's zero state is a valid
   * free page, so a new chunk's headers need no writing (heap_grow). */
  PAGE_DIRTY = 1,
  PAGE_CONSUMED = 2, /* has held small objects once: counts in "a" */
  PAGE_RELEASED = 4, /* free and given back to the OS (reads as zero) */
};

/* A page's marks: one byte a granule, the object's first granule holding
 * its mark; always 0 or 1, so the bytes' sum counts marked objects.
 * Bytes rather than bits so that GC threads marking side by side can set
 * a mark with a plain store: no two of them ever write the same byte with
 * different values, where a plain read-modify-write of a shared word of
 * bits loses a neighbour's bit (gcbench failed its checks that way), and a
 * locked OR cost 13% of one GC thread's gcbench mark rate (history.md,
 * "Mark bytes set by a plain store").  bdwgc's parallel builds use mark
 * bytes for the same reason.  In the header, so that a page reached for
 * the first time costs the header's misses and not one more in a
 * separate table. */
union page_marks {
  _Atomic uint8_t byte[GRANULES_PER_PAGE];
  _Atomic uint64_t word[MARK_WORDS_PER_PAGE];
};

struct page_header {
  _Atomic uint8_t state;       /* enum page_state; read racily by GC_base */
  uint8_t kind;                /* enum object_kind */
  uint8_t size_class;
  uint8_t flags;               /* enum page_flags */
  uint16_t object_granules;    /* small pages: granules per object */
  uint16_t capacity;           /* small pages: objects per page */
  uint32_t reciprocal;         /* small pages: ceil(65536 / object_granules) */
  /* Small pages: GC_free's test that an offset starts an object.  The
   * object size is odd_part << start_shift; start_inverse is odd_part's
   * inverse mod 2^32.  ror(offset * start_inverse, start_shift) is the
   * object index for a multiple of the size and exceeds 2^32 / size for
   * anything else (Granlund and Montgomery's divisibility test), so one
   * compare with capacity checks both. */
  uint32_t start_inverse;
  uint8_t start_shift;
  /* Large head: 1 while the thread that allocated the object is still
   * clearing it outside heap_lock (alloc/large.c).  Its own padding byte,
   * so that thread writes no field a lock holder writes. */
  _Atomic uint8_t clearing;
  /* Small pages of a thread-local kind: kind * SIZE_CLASS_COUNT + class,
   * the index of the objects' list in a thread's free_lists (as a flat
   * array) and free_budget; FREE_SLOT_NONE for the other kinds.  GC_free
   * reads this one field instead of kind and class (alloc/free.c). */
  uint16_t free_slot;
  uint32_t swept_epoch;        /* last collection epoch this page was swept in */
  uint32_t span_pages;         /* free or large head: pages in the span */
  uint32_t head_offset;        /* large tail / free tail: pages back to the head */
  uint32_t live_objects;       /* small pages: marked objects at the last sweep */
  /* Free pages: the gc_epoch of the latest collection that found a false
   * pointer into the page, or 0 (heap/blacklist.h).  Written by GC threads
   * side by side, so atomic (relaxed: they all store the same value). */
  _Atomic uint32_t blacklisted_at;
  size_t object_bytes;         /* large head: bytes of the object */
  uintptr_t start;             /* address of the page's first byte */
  struct page_header *next, *prev; /* pool or sweep lists */
  struct page_store *owner_store; /* page policies: the thread that owns it */
  int32_t first_owner;         /* thread id that consumed the page first */
  uint32_t freed_at;           /* free span head: page_pool_release's age (page_pool.c) */
  void *free_head, *free_tail; /* a swept page's free list (partial lists) */
  uint32_t free_count;
  /* The memory node its memory is on as the placement decided (heap/
   * placement.h): written when the page leaves the pool and NUMA is on;
   * in the hole before the marks, so the header keeps its size. */
  uint8_t node;
  union page_marks marks;      /* last: the fields above share a line */
};

/* A chunk keeps address space after its pages, and for their headers,
 * to grow in place (heap_grow): up to RESERVED_PAGES pages, of which
 * PAGE_COUNT are in use.  Pages beyond are reserved only; the headers of
 * the page-map slot that holds the last page in use are committed whole
 * (heap.c), the rest reserved only.  PAGE_COUNT only grows, under
 * heap_lock (atomic stores; heap_holds reads it without the lock). */
struct chunk {
  uintptr_t base;
  size_t page_count;
  size_t reserved_pages;
  size_t descriptor_bytes; /* committed: the chunk and its headers so far */
  struct chunk *next;
  size_t sweep_first_unit; /* scratch of the parallel sweep's plan (sweep.c) */
  struct page_header pages[];
};

/* Two-level page map: bits 47..34 pick an L2 table, bits 33..22 an entry
 * of it, one per CHUNK_BYTES of address space.  An entry names the chunk
 * and the header of the slot's first page: chunks are CHUNK_BYTES-aligned,
 * so a page's header is FIRST plus the page's index within the slot, with
 * no load of the chunk's base (the marker's walk, three dependent loads
 * before, is two).  Each field is published with a release store after
 * what it points to is ready; a reader reads one field, with acquire. */
struct pagemap_entry {
  _Atomic(struct page_header *) first;
  _Atomic(struct chunk *) chunk;
  /* The large object that holds the slot's first page (its head), or
   * NULL: how a pointer into a page whose header a huge object left
   * untouched finds it (large_lazy_object_start). */
  _Atomic(struct page_header *) large_head;
};
extern _Atomic(struct pagemap_entry *) pagemap_l1[1u << PAGEMAP_L1_BITS];

static inline struct pagemap_entry *pagemap_entry_of(uintptr_t a) {
  struct pagemap_entry *l2 = atomic_load_explicit(
      &pagemap_l1[a >> (CHUNK_SHIFT + PAGEMAP_L2_BITS)], memory_order_acquire);
  return l2 ? &l2[(a >> CHUNK_SHIFT) & ((1u << PAGEMAP_L2_BITS) - 1)] : NULL;
}
/* Cheap range filter for the conservative pointer test. */
extern _Atomic uintptr_t heap_lowest, heap_highest;

/* The chunk holding address A, or NULL when A is outside the heap.
 * Lock-free: chunks are published with release stores and never unmapped. */
static inline struct chunk *chunk_of_address(uintptr_t a) {
  if (a >> ADDRESS_BITS) return NULL;
  struct pagemap_entry *e = pagemap_entry_of(a);
  return e ? atomic_load_explicit(&e->chunk, memory_order_acquire) : NULL;
}

/* Page header for a word value A the caller knows is below
 * 2^ADDRESS_BITS (one inside [heap_lowest, heap_highest), as the marker's
 * candidates are: it skips that test), or NULL outside the heap. */
static inline struct page_header *page_of_low_address(uintptr_t a) {
  struct pagemap_entry *e = pagemap_entry_of(a);
  if (!e) return NULL;
  struct page_header *first = atomic_load_explicit(&e->first, memory_order_acquire);
  if (!first) return NULL;
  return first + ((a >> PAGE_SHIFT) & (PAGES_PER_CHUNK - 1));
}

/* Page header for any word value, or NULL when it points outside the
 * heap's page-map slots.  A slot's pages past its chunk's end (heap.c
 * grows by less than a slot) have headers too, which read as free. */
static inline struct page_header *page_of_address(uintptr_t a) {
  if (a >> ADDRESS_BITS) return NULL;
  return page_of_low_address(a);
}

/* Whether A lies in a page of the heap in use, not in the rest of its
 * chunk's last slot: the API's "is this the heap" (GC_is_heap_ptr).
 * Relaxed: a page count read while the heap grows is an older one, and
 * A then in a page that was not the heap's when the call began. */
static inline bool heap_holds(uintptr_t a) {
  struct chunk *c = chunk_of_address(a);
  return c && a - c->base < __atomic_load_n(&c->page_count, __ATOMIC_RELAXED) << PAGE_SHIFT;
}

/* Sets up page_is_object_start for objects of OBJECT_BYTES. */
static inline void page_set_start_test(struct page_header *p, uint32_t object_bytes) {
  uint32_t odd = object_bytes >> __builtin_ctz(object_bytes), inverse = odd;
  for (int i = 0; i < 5; i++) inverse *= 2 - odd * inverse; /* Newton: 3, 6, 12, 24, 48 bits */
  p->start_inverse = inverse;
  p->start_shift = (uint8_t)__builtin_ctz(object_bytes);
}

/* Whether OFFSET (< PAGE_BYTES) into small page P is where an object
 * starts: one multiply, one rotate, one compare (see start_inverse). */
static inline bool page_is_object_start(const struct page_header *p, uint32_t offset) {
  uint32_t scaled = offset * p->start_inverse, shift = p->start_shift;
  uint32_t index = (scaled >> shift) | (scaled << ((32 - shift) & 31));
  return index < p->capacity;
}

extern bool heap_interior_pointers; /* GC_all_interior_pointers */

/* Without interior pointers, the offsets into an object that still count
 * as pointing to it (GC_register_displacement; offset 0 always does):
 * bdwgc's rule for tagged pointers, one bit per byte offset below a page.
 * Set under heap_lock, which orders them before any collection's reads. */
extern uint64_t heap_displacements[PAGE_BYTES / 64];
static inline bool heap_displacement_ok(uintptr_t offset) {
  return offset < PAGE_BYTES && (heap_displacements[offset / 64] >> (offset % 64) & 1);
}

/* object_start_in_page's case for A on small page P: false, or true with
 * the start in *BASE (the marker calls it directly, having read the state
 * itself; a flag rather than a zero start, which would cost it a test of
 * *BASE). */
__attribute__((always_inline)) static inline bool small_object_start(
    const struct page_header *p, uintptr_t a, bool interior, uintptr_t *base) {
  unsigned granule = (unsigned)((a - p->start) >> GRANULE_SHIFT);
  unsigned index = (granule * p->reciprocal) >> 16;
  if (index >= p->capacity) return false; /* the page's unused tail */
  *base = p->start + ((uintptr_t)index * p->object_granules << GRANULE_SHIFT);
  return *base == a || interior || heap_displacement_ok(a - *base);
}

/* Huge objects' untouched headers (thesis §2.2.1 puts a header per page;
 * writing them all cost a huge object 9% of its size in memory at once,
 * used or not: history.md, "Huge objects' headers").  A large object of LARGE_LAZY_MIN_PAGES or
 * more leaves the header of each of its pages from the first slot
 * boundary (CHUNK_BYTES) after its start as it finds it when nothing has
 * ever written it (start 0: free, clean, unmarked); the page map's
 * large_head of each slot from there names the object's head.  Such a
 * page reads as PAGE_FREE, so the page walks need nothing new (they step
 * over a large object whole).  Freed, those pages' memory goes back to
 * the OS, so their untouched headers (clean) stay true. */
enum { LARGE_LAZY_MIN_PAGES = 2 * PAGES_PER_CHUNK };
/* The first address of an object of PAGES pages at START from which pages
 * may keep untouched headers, or UINTPTR_MAX. */
static inline uintptr_t large_lazy_at(uintptr_t start, size_t pages) {
  return pages < LARGE_LAZY_MIN_PAGES ? UINTPTR_MAX : (start | (CHUNK_BYTES - 1)) + 1;
}
/* Whether P's header has never been written (heap.c's chunks start zero;
 * every page the pool hands out or links gets its start). */
static inline bool page_header_untouched(const struct page_header *p) { return p->start == 0; }
/* object_start_in_page's case for A on a page that reads as free: the
 * start of the huge object holding it, or 0 (heap.c). */
uintptr_t large_lazy_object_start(uintptr_t a, struct page_header **page);
/* Names HEAD (or NULL) in the page map for every slot whose first page
 * lies in [FROM, TO) (heap_lock held; release stores). */
void pagemap_set_large_head(uintptr_t from, uintptr_t to, struct page_header *head);

/* The object A points into, given A's own page header P (non-NULL). */
__attribute__((always_inline)) static inline uintptr_t object_start_in_page(
    struct page_header *p, uintptr_t a, struct page_header **page, bool interior) {
  uint8_t state = atomic_load_explicit(&p->state, memory_order_relaxed);
  if (state == PAGE_SMALL) {
    uintptr_t base;
    *page = p;
    return small_object_start(p, a, interior, &base) ? base : 0;
  }
  if (state == PAGE_LARGE_TAIL) {
    if (!interior) return 0;
    p -= p->head_offset;
    if (atomic_load_explicit(&p->state, memory_order_relaxed) != PAGE_LARGE_HEAD) return 0;
  } else if (state != PAGE_LARGE_HEAD) {
    /* Only a never-written header can be a huge object's page: a false
     * pointer into an ordinary free page costs no page-map lookup. */
    return state == PAGE_FREE && interior && page_header_untouched(p)
               ? large_lazy_object_start(a, page)
               : 0;
  }
  if (a - p->start >= p->object_bytes && a != p->start) return 0;
  if (a != p->start && !interior && !heap_displacement_ok(a - p->start)) return 0;
  *page = p;
  return p->start;
}

/* The conservative pointer test: the start of the object A points into (or
 * at, without interior pointers), or 0.  *PAGE receives the object's first
 * page header. */
__attribute__((always_inline)) static inline uintptr_t object_start_rule(uintptr_t a, struct page_header **page,
                                          bool interior) {
  struct page_header *p = page_of_address(a);
  if (!p) return 0;
  return object_start_in_page(p, a, page, interior);
}
__attribute__((always_inline)) static inline uintptr_t object_start(uintptr_t a,
                                                                  struct page_header **page) {
  return object_start_rule(a, page, heap_interior_pointers);
}

static inline size_t object_size(const struct page_header *p) {
  return p->state == PAGE_SMALL ? (size_t)p->object_granules << GRANULE_SHIFT
                                : p->object_bytes;
}

/* Marks (union page_marks): the object's first granule holds its mark.
 * BASE is on P's page, which starts at a multiple of PAGE_BYTES (chunks
 * are CHUNK_BYTES-aligned), so its offset is its low bits: no load of
 * P->start, which for the uncollectable caches was a second line of the
 * header to fetch on every `new` (alloc/uncollectable.c). */
static inline _Atomic uint8_t *mark_bit_of(const struct page_header *p, uintptr_t base) {
  return (_Atomic uint8_t *)&p->marks.byte[(base & (PAGE_BYTES - 1)) >> GRANULE_SHIFT];
}
static inline bool mark_bit_test(const struct page_header *p, uintptr_t base) {
  return atomic_load_explicit(mark_bit_of(p, base), memory_order_relaxed) != 0;
}
/* Whether the program holds the object at BASE as far as the marks say:
 * marked, and not a free uncollectable object on a thread's cache, whose
 * mark byte is 2 (alloc/uncollectable.c).  For the API's views of marks
 * (GC_is_marked, GC_enumerate_reachable_objects_inner); collections take
 * any nonzero byte as marked. */
static inline bool mark_bit_test_held(const struct page_header *p, uintptr_t base) {
  return atomic_load_explicit(mark_bit_of(p, base), memory_order_relaxed) == 1;
}
/* Optimistic update (thesis §3.4.3): read first, and only when the mark
 * is clear the atomic exchange.  Returns true when this call set it: for
 * callers that must know exactly (allocation, bdwgc's GC_set_mark_bit);
 * GC threads set marks as mark.c's set_mark says. */
__attribute__((always_inline)) static inline bool mark_byte_set(_Atomic uint8_t *m) {
  if (atomic_load_explicit(m, memory_order_relaxed)) return false;
  return atomic_exchange_explicit(m, 1, memory_order_relaxed) == 0;
}
__attribute__((always_inline)) static inline bool mark_bit_set(struct page_header *p, uintptr_t base) {
  return mark_byte_set(mark_bit_of(p, base));
}
static inline void mark_bit_clear(struct page_header *p, uintptr_t base) {
  atomic_store_explicit(mark_bit_of(p, base), 0, memory_order_relaxed);
}
/* Objects marked on P, a page of a collectable kind (an uncollectable
 * page's cached objects have mark bytes of 2).  Each mark byte is 0 or 1,
 * so adding the mark words adds byte lanes that never carry (each lane ends at most
 * MARK_WORDS_PER_PAGE = 32), and one fold sums the lanes.  Not
 * __builtin_popcountll: without -mpopcnt (the x86-64 baseline this
 * library is built for) that is a libgcc call per word, 32 a page, and
 * was 3.5% of gcbench's run time (perf, cpu-clock) in the sweep. */
static inline unsigned page_marked_count(const struct page_header *p) {
  _Static_assert(MARK_WORDS_PER_PAGE <= 255, "byte lanes would carry");
  uint64_t lanes = 0;
  for (unsigned w = 0; w < MARK_WORDS_PER_PAGE; w++)
    lanes += atomic_load_explicit(&p->marks.word[w], memory_order_relaxed);
  /* Pairs of byte lanes into 16-bit lanes (each at most 64), then the
   * multiply gathers the four into the top 16 bits (at most 256). */
  const uint64_t low_bytes = 0x00ff00ff00ff00ffull;
  lanes = (lanes & low_bytes) + ((lanes >> 8) & low_bytes);
  return (unsigned)((lanes * 0x0001000100010001ull) >> 48);
}
static inline bool page_any_marked(const struct page_header *p) {
  /* Up to the first mark: most pages in use have one among their first
   * words. */
  for (unsigned w = 0; w < MARK_WORDS_PER_PAGE; w++)
    if (atomic_load_explicit(&p->marks.word[w], memory_order_relaxed)) return true;
  return false;
}
/* Clears P's marks, storing only to words with a mark: a page without
 * any keeps its lines clean, and they are not written back. */
static inline void page_clear_marks(struct page_header *p) {
  for (unsigned w = 0; w < MARK_WORDS_PER_PAGE; w++)
    if (atomic_load_explicit(&p->marks.word[w], memory_order_relaxed))
      atomic_store_explicit(&p->marks.word[w], 0, memory_order_relaxed);
}

/* No heap is larger than the user address space (47 bits on x86-64): a
 * size beyond is impossible, and rounding it up to chunks would wrap. */
#define HEAP_BYTES_MAX ((size_t)1 << (ADDRESS_BITS - 1))

/* ---- heap.c ---- */
/* Adds a chunk of at least BYTES; false when the OS or the heap limit says
 * no, which heap_grow_refusal then tells.  Caller holds heap_lock. */
bool heap_grow(size_t bytes);
/* Why the latest heap_grow that failed did: HEAP_REFUSED_LIMIT, or the
 * OS's errno.  Read by the out-of-memory message (base/messages.c). */
enum { HEAP_REFUSED_LIMIT = -1 };
int heap_grow_refusal(void);
size_t heap_size_bytes(void);
struct chunk *heap_first_chunk(void);
/* Walk every page header (collector, world stopped or heap_lock held). */
#define FOR_EACH_CHUNK(c) for (struct chunk *c = heap_first_chunk(); c; c = c->next)

/* The write barrier's hook (barrier/barrier.c sets it at barrier_init, a
 * layer above; NULL before), called with heap_lock held for pages
 * heap_grow committed: a new chunk, or a chunk grown in place.  Relaxed:
 * set once, and the callee checks its own state. */
typedef void heap_range_hook(uintptr_t lo, uintptr_t hi);
extern _Atomic(heap_range_hook *) heap_commit_hook;

/* ---- page_pool.c: free pages as coalescing spans (heap_lock held) ---- */
struct page_header *page_pool_take(size_t pages);
/* The first PAGES pages of the free span SPAN heads, or NULL when SPAN
 * heads no free span that long (a large object growing in place); pages
 * from LAZY_AT on may keep untouched headers (large_lazy_at).  The other
 * takes use the rule for an object starting at the span. */
struct page_header *page_pool_take_at(struct page_header *span, size_t pages, uintptr_t lazy_at);
/* The first PAGES pages of the longest free span, or NULL when it is
 * shorter: worst fit, for an object that grows (GC_realloc). */
struct page_header *page_pool_take_largest(size_t pages);
/* One fresh page for CLAIMANT, a page store taking pages in runs: the
 * page at *CURSOR while that heads a free span, else one from a span no
 * other store claims; *CURSOR is moved on (page_pool.c says why). */
struct page_header *page_pool_take_run(struct page_store *claimant, struct page_header **cursor);
/* The same for a claimant on memory node NODE under SGC_NUMA_PLACEMENT=
 * local: the page comes from a stripe of NODE while the pool has one, else
 * from any (never NULL while the pool has a page: no node's pool running
 * dry makes the heap grow, heap/placement.h). */
struct page_header *page_pool_take_run_on(struct page_store *claimant, struct page_header **cursor,
                                          unsigned node);
/* Pages whose headers are untouched (page_header_untouched) must read as
 * zero: they stay so, clean. */
void page_pool_put(struct page_header *first, size_t pages);
void page_pool_add_chunk(struct chunk *c);
/* Pages FROM.. of chunk C, just added by growing it in place: free and
 * clean, joined with a free span that ends right before them. */
void page_pool_add_grown(struct chunk *c, size_t from);
size_t page_pool_free_pages(void);
bool page_pool_is_span_head(const struct page_header *p);
/* Calls VISIT for every free span (its first page and length). */
void page_pool_for_each_span(void (*visit)(struct page_header *head, size_t pages, void *arg),
                             void *arg);
/* How far a walk over a chunk's page headers steps from P, whose state is
 * STATE: a free span or a large object as a whole, any other page alone.
 * Collections walk this way (mark_begin, the sweeps), so their cost
 * follows the pages in use rather than the heap's size.  Heap lock held
 * or the world stopped (the free-span test reads the pool). */
static inline size_t page_walk_step(const struct page_header *p, uint8_t state) {
  if (state == PAGE_LARGE_HEAD && p->span_pages) return p->span_pages;
  if (state == PAGE_FREE && page_pool_is_span_head(p)) return p->span_pages;
  return 1;
}

/* Calls VISIT for each object the last collection marked (and the
 * program holds: mark_bit_test_held), small or large, until it returns
 * true; whether one did.  The caller keeps the pages still (heap_lock,
 * page ops waited for, the page path closed, or the world stopped). */
typedef bool marked_object_visit(struct page_header *page, uintptr_t base, size_t bytes,
                                 void *arg);
bool heap_for_each_marked_object(marked_object_visit *visit, void *arg);

bool page_span_is_zeroed(struct page_header *first, size_t pages);
/* Gives free spans of at least MIN_PAGES back to the OS (their memory
 * reads as zero afterwards); returns the bytes released now.  After a
 * collection (page_pool_release_old) only spans no page of which was
 * freed in the last POOL_RELEASE_AGE collections; on request, all. */
size_t page_pool_release(size_t min_pages);
/* At the end of every collection, the age's clock. */
void page_pool_count_collection(void);
/* Releases the spans of at least MIN_PAGES that have stayed free. */
size_t page_pool_release_old(size_t min_pages);
size_t page_pool_released_bytes(void);

/* The program's GC_set_on_heap_resize hook, called after the heap grew or
 * shrank (api/compat_hooks.c defines it: an upcall, the heap's one). */
void heap_resized(size_t new_size);

#endif
