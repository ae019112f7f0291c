/* Page policies PS, AL and LPS(k) over thread-local free-page stores
 * (thesis §2.2).  Chosen at start-up by SGC_PAGE_POLICY=ps|al|lps and
 * SGC_LPS_K.  Locking: page_store.h. */
#include <stdlib.h>
#include <string.h>

#include "alloc/alloc.h"
#include "alloc/page_store.h"
#include "base/env.h"
#include "alloc/collector.h"
#include "heap/accounting.h"
#include "heap/heap_lock.h"
#include "common.h"
#include "os/numa.h"
#include "os/os.h"
#include "alloc/sweeper.h"

/* The global counters: a and sum max u_i change inside the page-path gate
 * too (relaxed atomics: counters, ordering nothing); l and max l only in
 * collections. */
static _Atomic long consumed_pages, sum_max_used;
static long live_pages_last, live_pages_max;
enum page_policy page_policy = PAGE_POLICY_LPS;
double page_policy_k = 1.5; /* chosen by measurement: see docs/benchmarks/targets.md */
/* Append-only: the head is published with release, read with acquire. */
static _Atomic(struct page_store *) all_stores;

#define FOR_EACH_STORE(s)                                                            \
  for (struct page_store *s = atomic_load_explicit(&all_stores, memory_order_acquire); s; \
       s = s->next_all)

/* Free pages in S, read without its lock: a hint for peeking and for
 * choosing a victim, which the locked pop then confirms. */
static long free_pages(struct page_store *s) {
  return atomic_load_explicit(&s->free_count, memory_order_relaxed);
}

static bool store_alive(struct page_store *s) {
  return atomic_load_explicit(&s->alive, memory_order_relaxed);
}

void page_policy_init(void) {
  static const struct env_word words[] = {
      {"ps", PAGE_POLICY_PS}, {"al", PAGE_POLICY_AL}, {"lps", PAGE_POLICY_LPS}};
  page_policy = (enum page_policy)env_choice("SGC_PAGE_POLICY", words, ENV_WORDS_COUNT(words),
                                             page_policy);
  page_policy_k = env_double_min("SGC_LPS_K", page_policy_k, 1.0);
}

/* A counter only its store's owner writes: no read-modify-write needed. */
static void owner_bump(_Atomic long *c) {
  atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + 1,
                        memory_order_relaxed);
}

struct page_store *page_store_of(struct thread_alloc *t) {
  if (t->page_store) return t->page_store;
  /* A retired store no page in use points to serves again: programs that
   * start thousands of threads keep a list as long as their peak. Its
   * counts go on adding up; max u_i starts again for the new thread. */
  struct page_store *s = NULL;
  FOR_EACH_STORE(r)
    if (!store_alive(r) && atomic_load_explicit(&r->used, memory_order_relaxed) == 0) {
      s = r;
      break;
    }
  if (s) {
    atomic_store_explicit(&s->max_used, 0, memory_order_relaxed);
  } else {
    s = os_alloc(sizeof *s);
    if (!s) sgc_fatal("out of memory for a page store");
    s->next_all = atomic_load_explicit(&all_stores, memory_order_relaxed);
    atomic_store_explicit(&all_stores, s, memory_order_release);
  }
  atomic_store_explicit(&s->owner_tid, thread_alloc_tid(t), memory_order_relaxed);
  if (numa_active()) atomic_store_explicit(&s->node, numa_current_node(), memory_order_relaxed);
  atomic_store_explicit(&s->alive, true, memory_order_relaxed);
  atomic_store_explicit(&s->active_epoch, atomic_load_explicit(&gc_epoch, memory_order_relaxed),
                        memory_order_relaxed);
  t->page_store = s;
  return s;
}

/* A store keeps two lists under its lock: `free`, pages threads emptied
 * (what LPS steals), and `reserve`, fresh pages taken ahead from the pool
 * (reserve_fresh_pages).  Only the owner takes reserved pages: stealing
 * one grows consumption exactly as a fresh page from the pool does, and
 * it scatters the threads' pages among each other. */
static struct page_header *list_pop(struct page_store *s, struct page_header **list,
                                    _Atomic long *count) {
  if (!atomic_load_explicit(count, memory_order_relaxed)) return NULL; /* peek, then lock */
  spin_lock(&s->lock);
  struct page_header *p = *list;
  if (p) {
    *list = p->next;
    atomic_store_explicit(count, atomic_load_explicit(count, memory_order_relaxed) - 1,
                          memory_order_relaxed);
  }
  spin_unlock(&s->lock);
  if (p) p->next = NULL;
  return p;
}

static void list_push(struct page_store *s, struct page_header **list, _Atomic long *count,
                      struct page_header *p) {
  spin_lock(&s->lock);
  p->next = *list;
  *list = p;
  atomic_store_explicit(count, atomic_load_explicit(count, memory_order_relaxed) + 1,
                        memory_order_relaxed);
  spin_unlock(&s->lock);
}

/* All stores' free pages together, a hint read without locks as the
 * stores' own counts are: with none outside its own store, a thread's
 * steal and others_have_free skip their look at every store. */
static _Atomic long stores_free_pages;

static struct page_header *store_pop(struct page_store *s) {
  struct page_header *p = list_pop(s, &s->free, &s->free_count);
  if (p) atomic_fetch_sub_explicit(&stores_free_pages, 1, memory_order_relaxed);
  return p;
}
static void store_push(struct page_store *s, struct page_header *p) {
  list_push(s, &s->free, &s->free_count, p);
  atomic_fetch_add_explicit(&stores_free_pages, 1, memory_order_relaxed);
}
static bool others_may_have_free(struct page_store *own) {
  return atomic_load_explicit(&stores_free_pages, memory_order_relaxed) > free_pages(own);
}
static struct page_header *reserve_pop(struct page_store *s) {
  return list_pop(s, &s->reserve, &s->reserve_count);
}
static long reserve_pages(struct page_store *s) {
  return atomic_load_explicit(&s->reserve_count, memory_order_relaxed);
}

/* The store OWN last stole from, while it still has free pages. */
static struct page_store *steal_hint(struct page_store *own) {
  struct page_store *hint = own->steal_hint;
  return hint && hint != own && free_pages(hint) > 0 ? hint : NULL;
}

static unsigned store_node(struct page_store *s) {
  return atomic_load_explicit(&s->node, memory_order_relaxed);
}

static struct page_store *fullest_store(struct page_store *own, bool same_node) {
  struct page_store *victim = NULL;
  long most = 0;
  FOR_EACH_STORE(s) {
    long n = free_pages(s);
    if (s != own && n > most && (!same_node || store_node(s) == store_node(own))) {
      victim = s;
      most = n;
    }
  }
  return victim;
}

/* LPS step 2-3: another thread's free page: from the store this one last
 * stole from while it has any, else the fullest store.  The counts are
 * read without their locks (a hint); the pop takes the lock.  A look for
 * the fullest at every steal walked every store: with 2,000 threads it
 * took 11% of bench-shapes -s threads.  With several memory nodes a
 * store on OWN's node goes first (a hint on another yields to one), so a
 * stolen page is local while any is: the thread-local lists sit under
 * their node (docs/numa.md). */
static struct page_header *steal(struct page_store *own) {
  if (!others_may_have_free(own)) return NULL;
  struct page_store *victim = steal_hint(own);
  if (victim && numa_active() && store_node(victim) != store_node(own)) {
    struct page_store *near = fullest_store(own, true);
    if (near) victim = own->steal_hint = near;
  }
  if (!victim) {
    if (numa_active()) victim = fullest_store(own, true);
    if (!victim) victim = fullest_store(own, false);
    own->steal_hint = victim;
  }
  struct page_header *p = victim ? store_pop(victim) : NULL;
  if (p) owner_bump(&own->stolen);
  return p;
}

static bool others_have_free(struct page_store *own) {
  if (!others_may_have_free(own)) return false;
  if (steal_hint(own)) return true;
  FOR_EACH_STORE(s)
    if (s != own && free_pages(s)) return true;
  return false;
}

/* Counts page P as taken by T into its store S (T is S's owner). */
static void account_take(struct thread_alloc *t, struct page_store *s, struct page_header *p) {
  if (!(p->flags & PAGE_CONSUMED)) {
    p->flags |= PAGE_CONSUMED;
    p->first_owner = thread_alloc_tid(t);
    atomic_fetch_add_explicit(&consumed_pages, 1, memory_order_relaxed);
  } else if (p->first_owner != thread_alloc_tid(t)) {
    owner_bump(&s->remote);
  }
  owner_bump(&s->taken);
  p->owner_store = s;
  long used = atomic_fetch_add_explicit(&s->used, 1, memory_order_relaxed) + 1;
  long max = atomic_load_explicit(&s->max_used, memory_order_relaxed);
  if (used > max) {
    atomic_store_explicit(&s->max_used, used, memory_order_relaxed);
    atomic_fetch_add_explicit(&sum_max_used, used - max, memory_order_relaxed);
  }
}

void page_counters_read(struct page_counters *out) {
  *out = (struct page_counters){
      .a = atomic_load_explicit(&consumed_pages, memory_order_relaxed),
      .l = live_pages_last,
      .max_l = live_pages_max,
      .sum_max_u = atomic_load_explicit(&sum_max_used, memory_order_relaxed)};
  FOR_EACH_STORE(s) {
    out->u += atomic_load_explicit(&s->used, memory_order_relaxed);
    out->taken += atomic_load_explicit(&s->taken, memory_order_relaxed);
    out->remote += atomic_load_explicit(&s->remote, memory_order_relaxed);
    out->stolen += atomic_load_explicit(&s->stolen, memory_order_relaxed);
    out->store_free += free_pages(s) + reserve_pages(s);
  }
}

void page_stores_visit(void (*visit)(const struct page_store_counters *, void *), void *arg) {
  FOR_EACH_STORE(s) {
    struct page_store_counters c = {
        .tid = atomic_load_explicit(&s->owner_tid, memory_order_relaxed),
        .alive = store_alive(s),
        .used = atomic_load_explicit(&s->used, memory_order_relaxed),
        .max_used = atomic_load_explicit(&s->max_used, memory_order_relaxed),
        .taken = atomic_load_explicit(&s->taken, memory_order_relaxed),
        .remote = atomic_load_explicit(&s->remote, memory_order_relaxed),
        .stolen = atomic_load_explicit(&s->stolen, memory_order_relaxed),
        .free = free_pages(s),
        .node = (int)store_node(s)};
    visit(&c, arg);
  }
}

/* With several nodes: the node OWN's thread runs on now, which a steal
 * prefers and local placement refills from.  Only the owner writes it;
 * others read it as a hint (relaxed: it orders nothing). */
static unsigned store_note_node(struct page_store *own) {
  unsigned node = numa_current_node();
  if (store_node(own) != node) atomic_store_explicit(&own->node, node, memory_order_relaxed);
  return node;
}

/* OWN's emptied pages, then (LPS, growth not allowed) another thread's,
 * then OWN's reserved fresh pages: LPS's order (thesis §2.2.3) with the
 * reserve standing for the pool. */
static struct page_header *take_own_or_steal(struct page_store *own,
                                             const struct page_policy_view *v) {
  if (numa_active()) store_note_node(own);
  struct page_header *p = store_pop(own);
  if (p) return p;
  if (page_policy == PAGE_POLICY_LPS && !heap_expansion_allowed(v) && (p = steal(own)) != NULL)
    return p;
  return reserve_pop(own);
}

/* A fresh page for OWN, from the span it takes its fresh pages from
 * (page_pool_take_run says why). */
static struct page_header *fresh_page(struct page_store *own) {
  if (!numa_active()) return page_pool_take_run(own, &own->fresh_cursor);
  return page_pool_take_run_on(own, &own->fresh_cursor, store_note_node(own));
}

static struct page_policy_view view(void) {
  return (struct page_policy_view){page_policy, page_policy_k,
                                   atomic_load_explicit(&consumed_pages, memory_order_relaxed),
                                   live_pages_max,
                                   atomic_load_explicit(&sum_max_used, memory_order_relaxed)};
}

struct page_header *small_page_take_own(struct thread_alloc *t) {
  struct page_store *own = t->page_store;
  if (!own || !page_policy_returns_to_owner(page_policy)) return NULL;
  /* LPS's bound, read without heap_lock: the counters change in
   * collections, which the gate keeps out, or atomically. */
  struct page_policy_view v = view();
  struct page_header *p = take_own_or_steal(own, &v);
  if (p) account_take(t, own, p);
  return p;
}

/* AL and LPS: a thread that takes a fresh page from the pool takes up to
 * FRESH_RESERVE_PAGES - 1 more into its store, so heap_lock is taken once
 * per that many fresh pages instead of once per page.  They count as
 * consumed (a) only when used, and LPS still checks its bound then. */
enum { FRESH_RESERVE_PAGES = 8 };

static void reserve_fresh_pages(struct page_store *own) {
  /* Only from a pool that could give every thread as much: with
   * thousands of threads, reserves would otherwise hold the heap. */
  if (page_pool_free_pages() < (size_t)FRESH_RESERVE_PAGES * (size_t)thread_registry_count()) return;
  struct page_header *taken[FRESH_RESERVE_PAGES];
  unsigned n = 0;
  while (n + 1 < FRESH_RESERVE_PAGES && (taken[n] = fresh_page(own)) != NULL) n++;
  /* Pushed last page first, so the store hands them out in the order the
   * pool gave them (ascending addresses from a span): handed out
   * descending, every page was a backward jump, and `alloc -m free` with
   * 256-byte objects ran at half speed (35 against 65 M/s) -- the
   * objects' later reuse order follows the first one. */
  while (n) {
    struct page_header *p = taken[--n];
    atomic_store_explicit(&p->state, PAGE_RESERVED, memory_order_relaxed);
    list_push(own, &own->reserve, &own->reserve_count, p);
  }
}

struct page_header *small_page_take(struct thread_alloc *t, bool *collected) {
  struct page_store *own = page_store_of(t);
  for (;;) {
    struct page_policy_view v = view();
    bool own_free =
        page_policy != PAGE_POLICY_PS && (free_pages(own) > 0 || reserve_pages(own) > 0);
    /* Only LPS asks about other threads' pages (a scan of the stores):
     * PS takes from the pool either way, AL never steals. */
    bool others_free = page_policy == PAGE_POLICY_LPS && !own_free &&
                       !heap_expansion_allowed(&v) && others_have_free(own);
    struct page_header *p = NULL;
    switch (page_policy_choose(&v, own_free, others_free)) {
    case PAGE_FROM_OWN: p = take_own_or_steal(own, &v); break;
    case PAGE_FROM_STEAL:
      if (numa_active()) store_note_node(own);
      /* The counts that chose a steal are read without the stores'
       * locks, and a store's owner takes its own pages back on the page
       * path, without heap_lock: with 2,000 threads, 66-76 stores held
       * one free page each, gone by the time the steal popped.  So when
       * the steal finds no page, a fresh one.  Going on to the exhausted
       * path instead grew the heap and chose the same steal again, a
       * quarter more heap each time it lost the race: under SGC_LPS_K=1,
       * one run in about 15 grew to 5.5 GiB, another to 1.1 TiB
       * (reserved; 1.4 GB resident) around 23 MB live
       * (tools/ci/heap_bound_threads.sh). */
      p = steal(own);
      if (!p) p = fresh_page(own);
      break;
    case PAGE_FROM_SHARED: p = fresh_page(own); break;
    case PAGE_FROM_FRESH:
      p = fresh_page(own);
      if (p && page_policy != PAGE_POLICY_PS) reserve_fresh_pages(own);
      break;
    }
    if (p) {
      account_take(t, own, p);
      return p;
    }
    /* Exhausted: sweeping may free a page (into a store or the pool),
     * then the heap policy collects or grows (thesis step 3). */
    if (sweep_until_page_freed()) continue;
    /* After a collection, back to the caller's lists: growing the heap
     * here, past pages the collection had mostly emptied, grew it by a
     * quarter at every collection -- 592 MiB around 100 MiB live when
     * each kept object came with 20 of garbage (history.md). */
    if (collect_if_due(collected)) return NULL;
    /* LPS with nothing fresh left steals once its bound says no more
     * fresh pages (thesis §2.2.3); while a < k·max(l) and a < Σ max(u_i)
     * it takes fresh pages from the OS, as the issue and the thesis have
     * it, so k decides how much memory buys locality.  Stealing here
     * whatever the bound said made LPS grow only where the collector had
     * grown the heap: `unfair -m drop` with LPS(3) read 8 / 12 / 12 MiB
     * at 2 / 4 / 8 threads, more remote than PS, and reads 12 / 16 / 16
     * now (history.md, "LPS's bound when the pool is empty"). */
    if (page_policy == PAGE_POLICY_LPS && !heap_expansion_allowed(&v) &&
        (p = steal(own)) != NULL) {
      account_take(t, own, p);
      return p;
    }
    if (grow_or_collect(PAGE_BYTES, collected)) continue;
    /* Out of heap: even AL takes another thread's page before failing. */
    if ((p = steal(own)) != NULL) {
      account_take(t, own, p);
      return p;
    }
    return NULL;
  }
}

void small_page_release(struct page_header *page) {
  struct page_store *owner = page->owner_store;
  if (owner) atomic_fetch_sub_explicit(&owner->used, 1, memory_order_relaxed);
  page->owner_store = NULL;
  page->free_head = NULL;
  page->free_count = 0;
  /* Not to an idle owner's store: page_stores_drain_idle gave its free
   * pages to the pool at the collection, and a page a later sweep
   * empties (GC_gcollect sweeps every page after the drain) would sit
   * there, asleep, as they did (unit_idle_pages' held page). */
  if (page_policy_returns_to_owner(page_policy) && owner && store_alive(owner) &&
      !page_store_idle(owner, atomic_load_explicit(&gc_epoch, memory_order_relaxed))) {
    atomic_store_explicit(&page->state, PAGE_RESERVED, memory_order_relaxed);
    store_push(owner, page);
    return;
  }
  page_pool_put(page, 1);
}

void small_page_adopt(struct thread_alloc *t, struct page_header *page) {
  struct page_store *own = t->page_store;
  struct page_store *owner = page->owner_store;
  if (owner == own) return;
  if (owner) atomic_fetch_sub_explicit(&owner->used, 1, memory_order_relaxed);
  account_take(t, own, page);
}

/* Per class, where the next look for another store's page to sweep
 * starts (page_store_steal_unswept): NULL for the first store,
 * UNSWEPT_NOWHERE when none has one until the next collection. */
#define UNSWEPT_NOWHERE ((struct page_store *)1)
static _Atomic(struct page_store *) unswept_look_from[KIND_THREAD_LOCAL_COUNT][SIZE_CLASS_COUNT];

void page_policy_after_mark(long live_pages) {
  /* The stores' lists to sweep were just filled: looks start over. */
  for (unsigned k = 0; k < KIND_THREAD_LOCAL_COUNT; k++)
    for (unsigned c = 0; c < SIZE_CLASS_COUNT; c++)
      atomic_store_explicit(&unswept_look_from[k][c], NULL, memory_order_relaxed);
  live_pages_last = live_pages;
}

/* LPS's l (thesis §2.2.4) counts pages holding survivors; but survivors
 * sprinkled over many threads' pages make every page count as live, and
 * the bound a < k·max(l) then lets the heap grow with that spread, which
 * spreads the survivors further: 500 sleeping threads, each keeping one
 * object in eight, drove the heap to 152 MiB around 12 MB live (PS: 28).
 * So l is what the survivors fill, never more than the pages they are on.
 * A smaller l only steals sooner: a_lps <= k·a_ps still holds. */
void page_policy_after_collection(size_t live_bytes) {
  long filled = (long)((live_bytes + PAGE_BYTES - 1) >> PAGE_SHIFT);
  if (filled < live_pages_last) live_pages_last = filled;
  if (live_pages_last > live_pages_max) live_pages_max = live_pages_last;
}

struct page_store *page_stores_all(void) {
  return atomic_load_explicit(&all_stores, memory_order_acquire);
}

/* Another thread's page to sweep is taken only where LPS would steal a
 * free page: its sweep may empty it, and then it is a page more for this
 * thread exactly as a stolen one is.
 *
 * Stores' lists of pages to sweep fill only in a collection
 * (sweep_after_mark, with heap_lock held and the page path closed) and
 * then only shrink, and this runs inside the page path or under
 * heap_lock, so no collection comes during it.  So a store found without
 * a page of (KIND, CLS) stays without one until the next collection, and
 * each class keeps where its last look ended: the next look starts there,
 * and a look that found nothing anywhere is not made again.  Every look
 * started at the first store before, past those already emptied: in
 * bench-shapes -s threads (2,000 threads) this walk was 33% of the run
 * (perf; one store a page of its own, a miss each), which took 7.2 s
 * against bdwgc's 3 s.  A look that starts from a position
 * another has since moved past only checks stores again; every position
 * written has only emptied stores before it, new stores (added at the
 * front) included, as they have nothing to sweep until a collection. */

struct page_header *page_store_steal_unswept(struct page_store *own, unsigned kind,
                                             unsigned cls) {
  if (page_policy != PAGE_POLICY_LPS || !sweep_stores_have_unswept()) return NULL;
  struct page_policy_view v = view();
  if (heap_expansion_allowed(&v)) return NULL;
  _Atomic(struct page_store *) *from = &unswept_look_from[kind][cls];
  struct page_store *s = atomic_load_explicit(from, memory_order_relaxed);
  if (s == UNSWEPT_NOWHERE) return NULL;
  for (s = s ? s : page_stores_all(); s; s = s->next_all) {
    if (s == own || !atomic_load_explicit(&s->unswept.pages, memory_order_relaxed)) continue;
    struct page_header *p = sweep_pop_store_unswept(s, kind, cls);
    if (p) {
      atomic_store_explicit(from, s, memory_order_relaxed);
      owner_bump(&own->stolen);
      return p;
    }
  }
  atomic_store_explicit(from, UNSWEPT_NOWHERE, memory_order_relaxed);
  return NULL;
}

static void retire(struct page_store *s) {
  struct page_header *p;
  sweep_orphan_store(s); /* its pages to sweep: anyone's now */
  while ((p = store_pop(s)) != NULL || (p = reserve_pop(s)) != NULL) page_pool_put(p, 1);
  atomic_store_explicit(&s->alive, false, memory_order_relaxed);
  /* The store itself stays: pages it owns may still be in use, and a
   * thread stealing inside the gate may be reading it. */
}

void page_store_retire(struct thread_alloc *t) {
  if (!t->page_store) return;
  heap_lock_acquire();
  retire(t->page_store);
  pthread_mutex_unlock(&heap_lock);
  t->page_store = NULL;
}

void page_stores_after_fork(struct page_store *keep) {
  FOR_EACH_STORE(s)
    if (s != keep && store_alive(s)) retire(s);
}

void page_stores_drain_idle(void) {
  uint32_t epoch = atomic_load_explicit(&gc_epoch, memory_order_relaxed);
  FOR_EACH_STORE(s) {
    if (!store_alive(s) || !page_store_idle(s, epoch)) continue;
    struct page_header *p;
    while ((p = store_pop(s)) != NULL || (p = reserve_pop(s)) != NULL) page_pool_put(p, 1);
  }
}

bool page_stores_drain(void) {
  bool any = false;
  FOR_EACH_STORE(s) {
    struct page_header *p;
    while ((p = store_pop(s)) != NULL || (p = reserve_pop(s)) != NULL) {
      page_pool_put(p, 1);
      any = true;
    }
  }
  return any;
}
