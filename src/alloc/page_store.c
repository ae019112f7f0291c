/* Page policies PS, AL and LPS(k) over thread-local free-page stores
 * (thesis §2.2).  Chosen at start-up by SGC_PAGE_POLICY=ps|al|lps and
 * SGC_LPS_K; all under heap_lock (so stealing needs no per-store lock). */
#include <stdlib.h>
#include <string.h>

#include "alloc/alloc.h"
#include "alloc/page_store.h"
#include "collect/collect.h"
#include "common.h"
#include "os/os.h"
#include "sweep/sweep.h"

struct page_counters page_counters;
enum page_policy page_policy = PAGE_POLICY_LPS;
double page_policy_k = 1.5; /* chosen by measurement: see README (page policies) */
static struct page_store *alive_stores;

void page_policy_init(void) {
  const char *p = getenv("SGC_PAGE_POLICY");
  if (p && *p) {
    if (!strcmp(p, "ps")) page_policy = PAGE_POLICY_PS;
    else if (!strcmp(p, "al")) page_policy = PAGE_POLICY_AL;
    else if (!strcmp(p, "lps")) page_policy = PAGE_POLICY_LPS;
    else sgc_warn("SGC_PAGE_POLICY=%s unknown; using lps", p);
  }
  const char *k = getenv("SGC_LPS_K");
  if (k && *k) {
    double v = strtod(k, NULL);
    if (v >= 1.0) page_policy_k = v;
    else sgc_warn("SGC_LPS_K=%s must be at least 1; using %.2f", k, page_policy_k);
  }
}

static struct page_store *store_of(struct sgc_thread *t) {
  if (t->page_store) return t->page_store;
  struct page_store *s = os_alloc(sizeof *s);
  if (!s) sgc_fatal("out of memory for a page store");
  s->alive = true;
  s->next_alive = alive_stores;
  if (alive_stores) alive_stores->prev_alive = s;
  alive_stores = s;
  t->page_store = s;
  return s;
}

static struct page_header *store_pop(struct page_store *s) {
  struct page_header *p = s->free;
  if (!p) return NULL;
  s->free = p->next;
  p->next = NULL;
  s->free_count--;
  page_counters.stores_free--;
  return p;
}

/* LPS step 2-3: another thread's free page, the fullest store first. */
static struct page_header *steal(struct page_store *own) {
  struct page_store *victim = NULL;
  for (struct page_store *s = alive_stores; s; s = s->next_alive)
    if (s != own && s->free_count && (!victim || s->free_count > victim->free_count)) victim = s;
  struct page_header *p = victim ? store_pop(victim) : NULL;
  if (p) page_counters.stolen++;
  return p;
}

static void account_take(struct sgc_thread *t, struct page_store *s, struct page_header *p) {
  if (!(p->flags & PAGE_CONSUMED)) {
    p->flags |= PAGE_CONSUMED;
    p->first_owner = t->tid;
    page_counters.a++;
  } else if (p->first_owner != t->tid) {
    page_counters.remote++;
  }
  page_counters.taken++;
  p->owner_store = s;
  s->used++;
  page_counters.u++;
  if (s->used > s->max_used) {
    page_counters.sum_max_u += s->used - s->max_used;
    s->max_used = s->used;
  }
}

static struct page_policy_view view(void) {
  return (struct page_policy_view){page_policy, page_policy_k, page_counters.a,
                                   page_counters.max_l, page_counters.sum_max_u};
}

struct page_header *small_page_take(struct sgc_thread *t) {
  struct page_store *own = store_of(t);
  bool collected = false;
  for (;;) {
    struct page_policy_view v = view();
    bool own_free = page_policy != PAGE_POLICY_PS && own->free_count > 0;
    bool others_free = page_counters.stores_free - own->free_count > 0;
    struct page_header *p = NULL;
    switch (page_policy_choose(&v, own_free, others_free)) {
    case PAGE_FROM_OWN: p = store_pop(own); break;
    case PAGE_FROM_STEAL: p = steal(own); break;
    case PAGE_FROM_SHARED:
    case PAGE_FROM_FRESH: p = page_pool_take(1); break;
    }
    if (p) {
      account_take(t, own, p);
      return p;
    }
    /* Exhausted: sweeping may free pages (into stores or the pool), then
     * the heap policy collects or grows (thesis step 3). */
    if (sweep_finish_all()) continue;
    if (!collected && collect_should_run()) {
      collect_locked(SGC_REASON_ALLOCATION);
      collected = true;
      continue;
    }
    /* LPS with nothing fresh left: a stolen page beats growing the heap. */
    if (page_policy == PAGE_POLICY_LPS && others_free && (p = steal(own)) != NULL) {
      account_take(t, own, p);
      return p;
    }
    if (heap_grow(collect_growth_bytes(PAGE_BYTES)) || heap_grow(PAGE_BYTES)) continue;
    if (!collected && !GC_dont_gc && !heap_accounting.disable_count) {
      collect_locked(SGC_REASON_HEAP_LIMIT);
      collected = true;
      continue;
    }
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
  if (owner) owner->used--;
  page_counters.u--;
  page->owner_store = NULL;
  page->free_head = NULL;
  page->free_count = 0;
  if (page_policy_returns_to_owner(page_policy) && owner && owner->alive) {
    atomic_store_explicit(&page->state, PAGE_RESERVED, memory_order_relaxed);
    page->next = owner->free;
    owner->free = page;
    owner->free_count++;
    page_counters.stores_free++;
    return;
  }
  page_pool_put(page, 1);
}

void small_page_adopt(struct sgc_thread *t, struct page_header *page) {
  struct page_store *own = store_of(t);
  struct page_store *owner = page->owner_store;
  if (owner == own) return;
  if (owner) owner->used--;
  page_counters.u--;
  account_take(t, own, page);
}

void page_policy_after_mark(long live_pages) {
  page_counters.l = live_pages;
  if (live_pages > page_counters.max_l) page_counters.max_l = live_pages;
}

static void retire(struct page_store *s) {
  struct page_header *p;
  while ((p = store_pop(s)) != NULL) page_pool_put(p, 1);
  s->alive = false;
  if (s->prev_alive) s->prev_alive->next_alive = s->next_alive;
  else alive_stores = s->next_alive;
  if (s->next_alive) s->next_alive->prev_alive = s->prev_alive;
  s->next_alive = s->prev_alive = NULL;
  /* The store itself stays: pages it owns may still be in use. */
}

void page_store_retire(struct sgc_thread *t) {
  if (!t->page_store) return;
  pthread_mutex_lock(&heap_lock);
  retire(t->page_store);
  pthread_mutex_unlock(&heap_lock);
  t->page_store = NULL;
}

void page_stores_after_fork(struct page_store *keep) {
  for (struct page_store *s = alive_stores, *next; s; s = next) {
    next = s->next_alive;
    if (s != keep) retire(s);
  }
}

bool page_stores_drain(void) {
  bool any = false;
  for (struct page_store *s = alive_stores; s; s = s->next_alive) {
    struct page_header *p;
    while ((p = store_pop(s)) != NULL) {
      page_pool_put(p, 1);
      any = true;
    }
  }
  return any;
}
