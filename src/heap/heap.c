/* Chunks: address space reserved from the OS in large aligned pieces and
 * published in the page map. */
#include "heap/heap.h"

#include <errno.h>
#include <string.h>

#include "common.h"
#include "heap/placement.h"
#include "os/os.h"

_Atomic(struct pagemap_entry *) pagemap_l1[1u << PAGEMAP_L1_BITS];
_Atomic uintptr_t heap_lowest = UINTPTR_MAX, heap_highest = 0;
bool heap_interior_pointers = true;
uint64_t heap_displacements[PAGE_BYTES / 64];
_Atomic(heap_range_hook *) heap_commit_hook;

static void heap_committed(uintptr_t lo, uintptr_t hi) {
  heap_range_hook *hook = atomic_load_explicit(&heap_commit_hook, memory_order_relaxed);
  if (hook) hook(lo, hi);
}

static struct chunk *chunk_list;     /* written under heap_lock */
static _Atomic size_t heap_bytes;
/* Written under heap_lock; relaxed: read only to word a message. */
static _Atomic int grow_refusal;

int heap_grow_refusal(void) { return atomic_load_explicit(&grow_refusal, memory_order_relaxed); }

static bool grow_refused(int why) {
  atomic_store_explicit(&grow_refusal, why, memory_order_relaxed);
  return false;
}

size_t heap_size_bytes(void) {
  return atomic_load_explicit(&heap_bytes, memory_order_relaxed);
}

struct chunk *heap_first_chunk(void) { return chunk_list; }

/* C's base is CHUNK_BYTES-aligned (os_reserve_room), which the
 * entries' FIRST relies on.  Publishes every slot [FROM, TO) touches
 * (a slot a growth in place shares with the pages before it is stored
 * again, with the same values). */
static bool pagemap_insert(struct chunk *c, uintptr_t from, uintptr_t to) {
  for (uintptr_t a = from & ~(uintptr_t)(CHUNK_BYTES - 1); a < to; a += CHUNK_BYTES) {
    size_t i1 = a >> (CHUNK_SHIFT + PAGEMAP_L2_BITS);
    struct pagemap_entry *l2 = atomic_load_explicit(&pagemap_l1[i1], memory_order_acquire);
    if (!l2) {
      l2 = os_alloc(sizeof(struct pagemap_entry) << PAGEMAP_L2_BITS);
      if (!l2) return false;
      /* Release: a reader that sees the table sees it zeroed. */
      atomic_store_explicit(&pagemap_l1[i1], l2, memory_order_release);
    }
    struct pagemap_entry *e = &l2[(a >> CHUNK_SHIFT) & ((1u << PAGEMAP_L2_BITS) - 1)];
    /* Release: a reader that finds the chunk or a header sees the chunk's
     * fields and its headers initialised. */
    atomic_store_explicit(&e->chunk, c, memory_order_release);
    atomic_store_explicit(&e->first, &c->pages[(a - c->base) >> PAGE_SHIFT], memory_order_release);
  }
  return true;
}

void pagemap_set_large_head(uintptr_t from, uintptr_t to, struct page_header *head) {
  for (uintptr_t a = (from + CHUNK_BYTES - 1) & ~(uintptr_t)(CHUNK_BYTES - 1); a < to; a += CHUNK_BYTES)
    atomic_store_explicit(&pagemap_entry_of(a)->large_head, head, memory_order_release);
}

SGC_NOINLINE uintptr_t large_lazy_object_start(uintptr_t a, struct page_header **page) {
  struct pagemap_entry *e = pagemap_entry_of(a);
  /* Acquire: pairs with pagemap_set_large_head's release, after which the
   * head's fields are written.  A racing GC_base may still read a head
   * freed meanwhile: the state and bounds below then say no, as for any
   * page it reads while it changes. */
  struct page_header *head = e ? atomic_load_explicit(&e->large_head, memory_order_acquire) : NULL;
  if (!head || atomic_load_explicit(&head->state, memory_order_acquire) != PAGE_LARGE_HEAD ||
      a - head->start >= head->object_bytes)
    return 0;
  *page = head;
  return head->start;
}

/* Address space a chunk keeps after its pages to grow in place: the
 * free pages of separate chunks never join (their headers lie in
 * separate arrays), so a heap grown chunk by chunk had no span for an
 * object larger than every chunk's free tail.  bench-shapes -s ramp
 * (objects of 1, 2, ... 48 MiB, each dropped) grew the heap to 236 MiB
 * in 11 chunks, and took 1.56 times bdwgc's time (history.md, "Large
 * objects that outgrow every freed size").  Only address space: a GiB of
 * pages and its 92 MiB of headers cost no memory until used.  Where the
 * address space is limited (RLIMIT_AS) a chunk reserves just itself. */
enum { CHUNK_ROOM_BYTES = 1 << 30 };

static size_t round_to_os_page(size_t bytes) {
  return (bytes + PAGE_BYTES - 1) & ~(size_t)(PAGE_BYTES - 1);
}

static size_t descriptor_bytes_for(size_t pages) {
  return round_to_os_page(sizeof(struct chunk) + pages * sizeof(struct page_header));
}

/* The heap grows by multiples of SGC_HEAP_STEP (a power of two, a page
 * to a chunk's 4 MiB, the default), and its size counts only pages the
 * program can use.  Smaller steps give a heap closer to what the growth
 * rule (collect/trigger.c) asks for, at the cost of collections: a
 * program whose live data is small collects once its heap is used up,
 * so the heap's free room sets how often.  1 MiB steps left alloc-drop's
 * heap at 7 MiB against 8 (1.5 times the collections) and cky's at 38
 * against 44 (4% slower); history.md, "Heap growth in steps".  A
 * chunk's pages past PAGE_COUNT stay reserved only (PROT_NONE, no
 * memory). */
static size_t heap_grow_step(void) {
  size_t step = sgc_settings.heap_step_bytes; /* 0 before the settings are read */
  return step ? step : CHUNK_BYTES;
}

static size_t round_up(size_t bytes, size_t step) { return (bytes + step - 1) & ~(step - 1); }

/* Descriptor bytes committed for a chunk of PAGES usable pages: the
 * headers of every page-map slot they touch, whole.  The page map names
 * a header for each page of a slot (page_of_address), so a false pointer
 * into the slot's unusable pages reads one: committed, never written, it
 * reads as zero (a free page, heap.h) and costs no memory. */
static size_t descriptor_bytes_committed(size_t pages) {
  return descriptor_bytes_for(round_up(pages, PAGES_PER_CHUNK));
}

/* Pages C's free span at its end holds (0 when its last page is used). */
static size_t free_tail_pages(struct chunk *c) {
  struct page_header *last = &c->pages[c->page_count - 1];
  if (atomic_load_explicit(&last->state, memory_order_relaxed) != PAGE_FREE) return 0;
  struct page_header *head = last - last->head_offset;
  if (!page_pool_is_span_head(head) || head + head->span_pages - 1 != last) return 0;
  return head->span_pages;
}

static void heap_added(uintptr_t lo, uintptr_t hi, size_t size) {
  if (lo < atomic_load(&heap_lowest)) atomic_store(&heap_lowest, lo);
  if (hi > atomic_load(&heap_highest)) atomic_store(&heap_highest, hi);
  atomic_fetch_add_explicit(&heap_bytes, size, memory_order_relaxed);
}

/* Grows a chunk with room for SIZE more bytes in place, the one whose
 * free tail is longest (the new pages join it); false when none can. */
static bool chunk_grow_in_place(size_t size) {
  size_t pages = size >> PAGE_SHIFT;
  struct chunk *best = NULL;
  size_t best_tail = 0;
  for (struct chunk *c = chunk_list; c; c = c->next) {
    if (c->reserved_pages - c->page_count < pages) continue;
    size_t tail = free_tail_pages(c);
    if (!best || tail > best_tail) {
      best = c;
      best_tail = tail;
    }
  }
  if (!best) return false;
  struct chunk *c = best;
  size_t from = c->page_count;
  uintptr_t lo = c->base + (from << PAGE_SHIFT), hi = lo + size;
  size_t desc_bytes = descriptor_bytes_committed(from + pages);
  if (!os_commit((void *)lo, size)) return false;
  heap_place_pages(lo, hi);
  if (desc_bytes > c->descriptor_bytes &&
      !os_commit((char *)c + c->descriptor_bytes, desc_bytes - c->descriptor_bytes))
    return false; /* the pages stay committed, unused: harmless */
  heap_place_descriptors(c, c->base, c->descriptor_bytes, desc_bytes);
  c->descriptor_bytes = desc_bytes;
  /* The headers are there (zero: free and clean) before the page map
   * names them. */
  if (!pagemap_insert(c, lo, hi)) sgc_fatal("cannot map page table for %zu bytes", size);
  __atomic_store_n(&c->page_count, from + pages, __ATOMIC_RELAXED); /* heap_holds */
  heap_added(lo, hi, size);
  heap_committed(lo, hi);
  page_pool_add_grown(c, from);
  heap_resized(heap_size_bytes());
  return true;
}

/* Reserves a new chunk's ROOM bytes of pages (CHUNK_BYTES-aligned) in
 * *BASE and the headers of every slot they touch in *C, nothing
 * committed; false, with errno and nothing kept, when either is refused. */
static bool chunk_reserve(size_t room, void **base, struct chunk **c) {
  *base = os_reserve_room(room, CHUNK_BYTES, false);
  if (!*base) return false;
  SGC_ASSERT(((uintptr_t)*base & (CHUNK_BYTES - 1)) == 0);
  *c = os_reserve_room(descriptor_bytes_committed(room >> PAGE_SHIFT), 0, true);
  if (*c) return true;
  int why = errno;
  os_free(*base, room);
  errno = why;
  return false;
}

bool heap_grow(size_t bytes) {
  if (bytes > HEAP_BYTES_MAX) return grow_refused(ENOMEM); /* GC_expand_hp(SIZE_MAX) */
  size_t size = round_up(bytes ? bytes : 1, heap_grow_step());
  size_t limit = sgc_settings.max_heap_bytes, heap = heap_size_bytes();
  if (limit && heap + size > limit) {
    /* What was asked, in whole pages, when it fits under the limit. */
    size_t left = limit > heap ? (limit - heap) & ~(size_t)(PAGE_BYTES - 1) : 0;
    size = round_to_os_page(bytes ? bytes : 1);
    if (left < size) return grow_refused(HEAP_REFUSED_LIMIT);
  }
  if (chunk_grow_in_place(size)) return true;
  /* Whole slots of the page map, so no other mapping lies in the slot
   * of the chunk's last page. */
  size_t room = size > CHUNK_ROOM_BYTES ? round_up(size, CHUNK_BYTES) : CHUNK_ROOM_BYTES;
  void *base;
  struct chunk *c;
  if (!chunk_reserve(room, &base, &c)) {
    /* The address space is limited (RLIMIT_AS): the chunk alone.  The
     * rest of its last slot may then hold other mappings, which its
     * headers (zero) and heap_holds take for no object, no heap. */
    room = size;
    if (!chunk_reserve(room, &base, &c)) return grow_refused(errno);
  }
  size_t pages = size >> PAGE_SHIFT, desc_bytes = descriptor_bytes_committed(pages);
  if (!os_commit(base, size) || !os_commit(c, desc_bytes)) {
    int why = errno;
    os_free(base, room);
    os_free(c, descriptor_bytes_committed(room >> PAGE_SHIFT));
    return grow_refused(why);
  }
  /* Before the first write to either, which would place its page. */
  heap_place_pages((uintptr_t)base, (uintptr_t)base + size);
  heap_place_descriptors(c, (uintptr_t)base, 0, desc_bytes);
  c->base = (uintptr_t)base;
  c->page_count = pages;
  c->reserved_pages = room >> PAGE_SHIFT;
  c->descriptor_bytes = desc_bytes;
  /* The descriptors are left as the OS gives them: all zero is a free,
   * clean page (PAGE_FREE, no PAGE_DIRTY), and the pool writes a header's
   * start when its page becomes a span's head or tail or leaves the pool
   * (page_pool.c).  Writing every header here made the descriptors of a
   * chunk resident at once, 9% of the heap's size whether its pages were
   * used or not: a 256 MiB initial heap cost 24 MB of memory. */
  if (!pagemap_insert(c, c->base, c->base + size))
    sgc_fatal("cannot map page table for %zu bytes", size);
  c->next = chunk_list;
  chunk_list = c;
  heap_added(c->base, c->base + size, size);
  heap_committed(c->base, c->base + size);
  page_pool_add_chunk(c);
  heap_resized(heap_size_bytes());
  return true;
}
