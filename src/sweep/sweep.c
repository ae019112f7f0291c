/* Sweeping small pages and large objects.  Unmarked objects of scanned
 * kinds on pages with survivors are cleared here, so free-list objects
 * hold zeros (the allocation fast path only clears the link word) and a
 * stray pointer to a free object retains nothing; a page with no survivor
 * is cleared by its next format instead (sweep_page). */
#include <string.h>

#include "alloc/alloc.h"
#include "alloc/page_store.h"
#include "heap/accounting.h"
#include "heap/heap_lock.h"
#include "mark/disclaim.h"
#include "common.h"
#include "heap/heap.h"
#include "mark/mark.h"
#include "os/os.h"
#include "os/spin_lock.h"
#include "sweep/sweep.h"

/* Per kind and size class: pages waiting to be swept in this epoch that
 * no live thread owns (all of them under PS; the others wait in their
 * owner's store), and swept pages with free objects.  Each class has its
 * own lock, so refills
 * of different classes (and the page path outside heap_lock,
 * alloc/page_path.h) do not meet; a collection rebuilds the lists with the
 * page-path gate closed and takes no lock. */
struct sweep_class {
  struct spin_lock lock;
  struct page_header *unswept, *partial;
} __attribute__((aligned(64)));
static struct sweep_class sweep_classes[KIND_THREAD_LOCAL_COUNT][SIZE_CLASS_COUNT];
static _Atomic size_t partial_free_bytes;
/* All stores' unswept pages together (each store's own count summed): a
 * look for pages to sweep skips the walk over every store when it is 0
 * (sweep_waiting; with 2,000 threads that walk, at each page-policy miss,
 * took 6.7% of bench-shapes -s threads).  Relaxed: a hint, as the stores'
 * counts are. */
static _Atomic long stores_unswept_pages;

bool sweep_stores_have_unswept(void) {
  return atomic_load_explicit(&stores_unswept_pages, memory_order_relaxed) > 0;
}

static void partial_bytes_add(size_t bytes) {
  atomic_fetch_add_explicit(&partial_free_bytes, bytes, memory_order_relaxed);
}

static void sweep_lists_reset(void) {
  for (unsigned k = 0; k < KIND_THREAD_LOCAL_COUNT; k++)
    for (unsigned c = 0; c < SIZE_CLASS_COUNT; c++)
      sweep_classes[k][c].unswept = sweep_classes[k][c].partial = NULL;
  for (struct page_store *s = page_stores_all(); s; s = s->next_all) {
    memset(s->unswept.head, 0, sizeof s->unswept.head);
    memset(s->unswept.tail, 0, sizeof s->unswept.tail);
    atomic_store_explicit(&s->unswept.pages, 0, memory_order_relaxed);
  }
  atomic_store_explicit(&stores_unswept_pages, 0, memory_order_relaxed);
  atomic_store_explicit(&partial_free_bytes, 0, memory_order_relaxed);
}

/* Builds PAGE's free list from its unmarked objects; runs of dead objects
 * are cleared with one memset each, far fewer calls than one per object.
 * A page with no mark at all is left as it is, with live_objects 0 and no
 * list: whoever takes it next formats it (page_format_small), so its
 * memory is cleared once, just before use, not here and again there.  An
 * eager sweep of a heap larger than the cache would otherwise clear every
 * page twice, the first time long before the page is used. */
void sweep_page(struct page_header *page) {
  size_t size = (size_t)page->object_granules << GRANULE_SHIFT;
  char *base = (char *)page->start;
  /* Custom kinds too: a conservative pointer to a free object makes the
   * marker run its mark procedure, which must find zeros (bdwgc clears
   * such kinds' free objects the same way). */
  bool clear = page->kind == KIND_NORMAL || kind_is_custom(page->kind);
  /* Only object starts are ever marked, so the bits counted are the
   * survivors: a page with none, or with every object marked (common in
   * old data), needs no walk over its objects. */
  unsigned marked = page_marked_count(page);
  void *head = NULL, **link = &head;
  unsigned live = 0, free_count = 0;
  if (marked == 0 || marked == page->capacity) {
    page->free_head = page->free_tail = NULL;
    page->free_count = page->capacity - marked;
    page->live_objects = marked;
    page->swept_epoch = atomic_load_explicit(&gc_epoch, memory_order_relaxed);
    return;
  }
  char *run = NULL; /* first dead object of the current run */
  for (unsigned i = 0; i < page->capacity; i++) {
    char *obj = base + i * size;
    if (mark_bit_test(page, (uintptr_t)obj)) {
      live++;
      if (run && clear) memset(run, 0, (size_t)(obj - run));
      run = NULL;
      continue;
    }
    if (!run) run = obj;
    free_count++;
  }
  if (run && clear) memset(run, 0, (size_t)(base + page->capacity * size - run));
  for (unsigned i = 0; i < page->capacity; i++) {
    char *obj = base + i * size;
    if (mark_bit_test(page, (uintptr_t)obj)) continue;
    *link = obj;
    link = (void **)obj;
  }
  *link = NULL;
  page->free_head = head;
  page->free_tail = head ? (void *)link : NULL; /* link is the last object's link word */
  page->free_count = free_count;
  page->live_objects = live;
  page->swept_epoch = atomic_load_explicit(&gc_epoch, memory_order_relaxed);
}

void *sweep_detach(struct page_header *page, unsigned *count, void **tail) {
  void *head = page->free_head;
  *count = page->free_count;
  *tail = page->free_tail;
  page->free_head = page->free_tail = NULL;
  page->free_count = 0;
  return head;
}

/* Pops the head of *LIST under LOCK.  A peek without the lock first
 * (relaxed: a hint, confirmed under it): an empty list is common, and a
 * store owner's peeks stay in its cache until someone steals.  So the
 * head is stored atomically too (relaxed; the lock orders the rest). */
static struct page_header *locked_pop(struct spin_lock *lock, struct page_header **list) {
  if (!__atomic_load_n(list, __ATOMIC_RELAXED)) return NULL;
  spin_lock(lock);
  struct page_header *page = *list;
  if (page) __atomic_store_n(list, page->next, __ATOMIC_RELAXED);
  spin_unlock(lock);
  if (page) page->next = NULL;
  return page;
}

static void locked_push(struct spin_lock *lock, struct page_header **list,
                        struct page_header *page) {
  spin_lock(lock);
  page->next = *list;
  __atomic_store_n(list, page, __ATOMIC_RELAXED); /* peeked at: locked_pop */
  spin_unlock(lock);
}

void *sweep_take_partial(unsigned kind, unsigned cls, unsigned *count, void **tail) {
  struct sweep_class *sc = &sweep_classes[kind][cls];
  struct page_header *page = locked_pop(&sc->lock, &sc->partial);
  if (!page) return NULL;
  atomic_fetch_sub_explicit(&partial_free_bytes, (size_t)page->free_count * size_class_bytes[cls],
                            memory_order_relaxed);
  return sweep_detach(page, count, tail);
}

static struct page_header *pop_shared_unswept(unsigned kind, unsigned cls) {
  struct sweep_class *sc = &sweep_classes[kind][cls];
  return locked_pop(&sc->lock, &sc->unswept);
}

struct page_header *sweep_pop_store_unswept(struct page_store *s, unsigned kind, unsigned cls) {
  struct page_header *page = locked_pop(&s->lock, &s->unswept.head[kind][cls]);
  if (page) {
    atomic_fetch_sub_explicit(&s->unswept.pages, 1, memory_order_relaxed);
    atomic_fetch_sub_explicit(&stores_unswept_pages, 1, memory_order_relaxed);
  }
  return page;
}

/* A thread sweeps its own pages first: they are the ones most likely in
 * its cache, its sweep touches no other thread's lines, and an emptied
 * page stays its own as AL and LPS want (thesis §2.2).  Sharing one list
 * per class made half of gcbench's pages at 2 threads remote. */
struct page_header *sweep_pop_unswept(struct thread_alloc *t, unsigned kind, unsigned cls) {
  struct page_store *own = t ? t->page_store : NULL;
  struct page_header *page = own ? sweep_pop_store_unswept(own, kind, cls) : NULL;
  if (!page) page = pop_shared_unswept(kind, cls);
  if (!page && own) page = page_store_steal_unswept(own, kind, cls);
  return page;
}

void sweep_orphan_store(struct page_store *s) {
  for (unsigned k = 0; k < KIND_THREAD_LOCAL_COUNT; k++)
    for (unsigned c = 0; c < SIZE_CLASS_COUNT; c++) {
      struct sweep_class *sc = &sweep_classes[k][c];
      struct page_header *page;
      while ((page = sweep_pop_store_unswept(s, k, c)) != NULL)
        locked_push(&sc->lock, &sc->unswept, page);
    }
}

/* Sweeps PAGE, which waited in class (KIND, CLS): emptied, it goes back
 * by the policy (true); with free objects, onto the partial list. */
static bool sweep_waiting_page(struct page_header *page, unsigned kind, unsigned cls) {
  sweep_page(page);
  if (page->live_objects == 0) {
    small_page_release(page);
    return true;
  }
  if (page->free_count) {
    struct sweep_class *sc = &sweep_classes[kind][cls];
    partial_bytes_add((size_t)page->free_count * size_class_bytes[cls]);
    locked_push(&sc->lock, &sc->partial, page);
  }
  return false;
}

/* Sweeps waiting pages until STOP_AT_FREED pages became free (0: all of
 * them): the shared lists, then each store that has some, so a heap with
 * thousands of threads does not cost a look at every store per class.
 * True when some page became free. */
static bool sweep_waiting(unsigned stop_at_freed) {
  unsigned freed = 0;
  struct page_store *s = NULL; /* NULL: the shared lists */
  do {
    if (s && !atomic_load_explicit(&s->unswept.pages, memory_order_relaxed)) continue;
    for (unsigned k = 0; k < KIND_THREAD_LOCAL_COUNT; k++)
      for (unsigned c = 0; c < SIZE_CLASS_COUNT; c++) {
        struct page_header *page;
        while ((page = s ? sweep_pop_store_unswept(s, k, c) : pop_shared_unswept(k, c)) != NULL)
          if (sweep_waiting_page(page, k, c) && ++freed == stop_at_freed) return true;
      }
  } while (sweep_stores_have_unswept() && (s = s ? s->next_all : page_stores_all()) != NULL);
  return freed != 0;
}

bool sweep_finish_all(void) { return sweep_waiting(0); }

bool sweep_until_page_freed(void) { return sweep_waiting(1); }

size_t sweep_free_bytes_estimate(void) {
  return atomic_load_explicit(&partial_free_bytes, memory_order_relaxed);
}

/* The unswept lists alternate direction from one collection to the next:
 * pages are popped (and reused) in descending address order after one
 * collection and ascending after the next, so a cycle starts with the
 * pages the previous one used last, the ones most likely still cached.
 * Popped in the same order every cycle, the least recently used page
 * always came first: a miss on every page once the heap outgrows the
 * cache. */
/* Queues PAGE on HEAD (with *TAIL) at the end the direction says. */
static void queue_unswept(struct page_header **head, struct page_header **tail,
                          struct page_header *page, bool ascending) {
  if (ascending) {
    page->next = NULL;
    if (*tail) (*tail)->next = page;
    else *head = page;
    *tail = page;
  } else {
    page->next = *head;
    *head = page;
  }
}

void sweep_after_mark(void) {
  sweep_lists_reset();
  static struct page_header *shared_tail[KIND_THREAD_LOCAL_COUNT][SIZE_CLASS_COUNT];
  memset(shared_tail, 0, sizeof shared_tail);
  uint32_t epoch = atomic_load_explicit(&gc_epoch, memory_order_relaxed);
  bool ascending = epoch & 1;
  bool to_owner = page_policy_returns_to_owner(page_policy);
  long live_pages = 0, store_pages = 0;
  /* Disclaim procedures (gc_disclaim.h) first, in a walk of their own
   * (none when no kind has one): an object one keeps is marked by the
   * time this walk queues its page. */
  if (unlikely(disclaim_kinds_now() != 0))
    FOR_EACH_CHUNK(c) disclaim_pages(c, 0, c->page_count);
  FOR_EACH_CHUNK(c) {
    for (size_t i = 0, step; i < c->page_count; i += step) {
      struct page_header *p = &c->pages[i];
      uint8_t state = atomic_load_explicit(&p->state, memory_order_relaxed);
      step = page_walk_step(p, state); /* before large_free merges the span */
      if (state == PAGE_SMALL && p->kind < KIND_THREAD_LOCAL_COUNT) {
        live_pages += page_any_marked(p);
        p->free_head = NULL;
        p->free_count = 0;
        unsigned k = p->kind, cl = p->size_class;
        struct page_store *owner = p->owner_store;
        /* A sleeping thread's pages are anyone's to sweep (issue 53). */
        if (to_owner && owner && atomic_load_explicit(&owner->alive, memory_order_relaxed) &&
            !page_store_idle(owner, epoch)) {
          queue_unswept(&owner->unswept.head[k][cl], &owner->unswept.tail[k][cl], p, ascending);
          atomic_store_explicit(&owner->unswept.pages,
                                atomic_load_explicit(&owner->unswept.pages, memory_order_relaxed) + 1,
                                memory_order_relaxed);
          store_pages++;
        } else {
          queue_unswept(&sweep_classes[k][cl].unswept, &shared_tail[k][cl], p, ascending);
        }
      } else if (state == PAGE_LARGE_HEAD && kind_is_collectable(p->kind) &&
                 !mark_bit_test(p, p->start)) {
        large_free(p);
      }
    }
  }
  atomic_store_explicit(&stores_unswept_pages, store_pages, memory_order_relaxed);
  page_policy_after_mark(live_pages);
}

/* ---- eager parallel sweep (SGC_SWEEP=parallel; papers/004) ----
 * The GC threads claim runs of SWEEP_UNIT_PAGES pages with an atomic
 * counter, sweep every small page in them and keep what they find in
 * lists of their own (partial pages per class, empty pages, dead large
 * objects); the collector then concatenates the lists and returns the free
 * pages to the pool.  Mutators may run meanwhile: they only touch objects
 * on their free lists, which are marked and left alone here. */

enum { SWEEP_UNIT_PAGES = 256, MAX_SWEEPERS = 1024 };

struct sweep_unit {
  struct chunk *chunk;
  size_t first, count;
};

struct sweep_local {
  struct page_header *partial_head[KIND_THREAD_LOCAL_COUNT][SIZE_CLASS_COUNT];
  struct page_header *partial_tail[KIND_THREAD_LOCAL_COUNT][SIZE_CLASS_COUNT];
  size_t partial_bytes;
  long live_pages;
  struct page_header *empty_pages, *dead_large;
} __attribute__((aligned(64)));

static struct sweep_unit *units;
static size_t unit_count, units_capacity;
static _Atomic size_t next_unit;
static struct sweep_local *locals;

static void sweep_unit(struct sweep_local *l, struct sweep_unit *u) {
  /* Disclaim procedures first (gc_disclaim.h; as sweep_after_mark). */
  if (unlikely(disclaim_kinds_now() != 0)) disclaim_pages(u->chunk, u->first, u->count);
  for (size_t i = u->first, step; i < u->first + u->count; i += step) {
    struct page_header *p = &u->chunk->pages[i];
    uint8_t state = atomic_load_explicit(&p->state, memory_order_relaxed);
    step = page_walk_step(p, state); /* free spans, large tails: nothing to sweep */
    if (state == PAGE_SMALL && p->kind < KIND_THREAD_LOCAL_COUNT) {
      sweep_page(p);
      p->next = NULL;
      if (p->live_objects) l->live_pages++;
      if (p->live_objects == 0) {
        p->free_head = NULL;
        p->free_count = 0;
        p->next = l->empty_pages;
        l->empty_pages = p;
      } else if (p->free_count) {
        unsigned k = p->kind, c = p->size_class;
        if (l->partial_tail[k][c]) l->partial_tail[k][c]->next = p;
        else l->partial_head[k][c] = p;
        l->partial_tail[k][c] = p;
        l->partial_bytes += (size_t)p->free_count * size_class_bytes[c];
      }
    } else if (state == PAGE_LARGE_HEAD && kind_is_collectable(p->kind) &&
               !mark_bit_test(p, p->start)) {
      p->next = l->dead_large;
      l->dead_large = p;
    }
  }
}

/* Units that lie wholly inside a free span have nothing to sweep: marked
 * empty span by span (the pool's list, not a walk over the pages), then
 * left out.  With a 1 GiB heap holding a few hundred KB, the workers read
 * every free page's header otherwise: 1.0 ms a collection. */
static void empty_covered_units(struct page_header *head, size_t pages, void *arg) {
  (void)arg;
  struct chunk *c = chunk_of_address(head->start);
  if (!c) return;
  size_t from = (size_t)(head - c->pages), to = from + pages;
  size_t k = (from + SWEEP_UNIT_PAGES - 1) / SWEEP_UNIT_PAGES; /* first unit starting in it */
  for (; k * SWEEP_UNIT_PAGES < to; k++) {
    struct sweep_unit *u = &units[c->sweep_first_unit + k];
    if (u->first + u->count <= to) u->count = 0;
  }
}

static void drop_free_units(void) {
  page_pool_for_each_span(empty_covered_units, NULL);
  size_t kept = 0;
  for (size_t u = 0; u < unit_count; u++)
    if (units[u].count) units[kept++] = units[u];
  unit_count = kept;
}

static void sweep_worker(struct marker *m, void *arg) {
  (void)arg;
  struct sweep_local *l = &locals[m->index];
  size_t u;
  while ((u = atomic_fetch_add_explicit(&next_unit, 1, memory_order_relaxed)) < unit_count)
    sweep_unit(l, &units[u]);
}

void sweep_after_mark_parallel(void) {
  sweep_lists_reset();
  if (!locals) locals = os_alloc(MAX_SWEEPERS * sizeof *locals);
  size_t count = 0;
  FOR_EACH_CHUNK(c) count += (c->page_count + SWEEP_UNIT_PAGES - 1) / SWEEP_UNIT_PAGES;
  /* The plan's array is kept from one collection to the next and grown
   * when the heap has: mapping and unmapping it each time cost a system
   * call each, and the unmapping a TLB shootdown on every CPU running
   * one of the program's threads. */
  if (count > units_capacity) {
    size_t want = count + count / 2;
    struct sweep_unit *grown = os_alloc(want * sizeof *units);
    if (grown) {
      if (units) os_free(units, units_capacity * sizeof *units);
      units = grown;
      units_capacity = want;
    }
  }
  if (!units || count > units_capacity || !locals) {
    sweep_after_mark(); /* no memory for the plan: sweep lazily */
    return;
  }
  unit_count = 0;
  FOR_EACH_CHUNK(c) {
    c->sweep_first_unit = unit_count;
    for (size_t first = 0; first < c->page_count; first += SWEEP_UNIT_PAGES) {
      size_t n = c->page_count - first;
      units[unit_count++] = (struct sweep_unit){c, first, n < SWEEP_UNIT_PAGES ? n : SWEEP_UNIT_PAGES};
    }
  }
  drop_free_units();
  atomic_store_explicit(&next_unit, 0, memory_order_relaxed);
  unsigned workers = parallel_set_active(sgc_settings.markers);
  if (workers > MAX_SWEEPERS) workers = parallel_set_active(MAX_SWEEPERS);
  /* Cleared here, not by the workers: a helper that never joins leaves
   * its (empty) lists behind. */
  memset(locals, 0, workers * sizeof *locals);
  parallel_run_phase(sweep_worker, NULL, false);
  long live_pages = 0;
  for (unsigned w = 0; w < workers; w++) {
    struct sweep_local *l = &locals[w];
    for (unsigned k = 0; k < KIND_THREAD_LOCAL_COUNT; k++)
      for (unsigned c = 0; c < SIZE_CLASS_COUNT; c++)
        if (l->partial_head[k][c]) {
          l->partial_tail[k][c]->next = sweep_classes[k][c].partial;
          sweep_classes[k][c].partial = l->partial_head[k][c];
        }
    partial_bytes_add(l->partial_bytes);
    for (struct page_header *p = l->empty_pages, *next; p; p = next) {
      next = p->next;
      p->next = NULL;
      small_page_release(p);
    }
    live_pages += l->live_pages;
    for (struct page_header *p = l->dead_large, *next; p; p = next) {
      next = p->next;
      large_free(p);
    }
  }
  page_policy_after_mark(live_pages);
}
