/* Work, critical path and misses of a snapshot's graph (graph.h). */
#include "graph.h"

#include "tlb.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The marker's halving of [LO, HI) (offsets, multiples of 8). */
static uint64_t halve(uint64_t lo, uint64_t hi) { return lo + (((hi - lo) / 2) & ~(uint64_t)7); }

uint64_t graph_pieces(uint64_t bytes, uint64_t split) {
  if (!split || bytes <= split) return 1;
  uint64_t mid = halve(0, bytes);
  return graph_pieces(mid, split) + graph_pieces(bytes - mid, split);
}

static bool scanned(const struct snapshot_object *o) { return o->kind != SNAP_ATOMIC; }

/* ---- T_inf: earliest discovery times, Dijkstra over a binary heap ---- */

struct queue {
  double *time;
  uint32_t *index;
  size_t count, cap;
};

static bool queue_push(struct queue *q, double t, uint32_t i) {
  if (q->count == q->cap) {
    size_t cap = q->cap ? 2 * q->cap : 1024;
    double *time = realloc(q->time, cap * sizeof *time);
    if (!time) return false;
    q->time = time;
    uint32_t *index = realloc(q->index, cap * sizeof *index);
    if (!index) return false;
    q->index = index;
    q->cap = cap;
  }
  size_t k = q->count++;
  while (k && q->time[(k - 1) / 2] > t) {
    q->time[k] = q->time[(k - 1) / 2];
    q->index[k] = q->index[(k - 1) / 2];
    k = (k - 1) / 2;
  }
  q->time[k] = t;
  q->index[k] = i;
  return true;
}

static void queue_pop(struct queue *q, double *t, uint32_t *i) {
  *t = q->time[0];
  *i = q->index[0];
  double lt = q->time[--q->count];
  uint32_t li = q->index[q->count];
  size_t k = 0;
  for (;;) {
    size_t c = 2 * k + 1;
    if (c >= q->count) break;
    if (c + 1 < q->count && q->time[c + 1] < q->time[c]) c++;
    if (q->time[c] >= lt) break;
    q->time[k] = q->time[c];
    q->index[k] = q->index[c];
    k = c;
  }
  q->time[k] = lt;
  q->index[k] = li;
}

/* The latest finish over the pieces of [LO, HI), available at T. */
static double pieces_finish(uint64_t lo, uint64_t hi, double t, uint64_t split, double object_ns,
                            double word_ns) {
  if (!split || hi - lo <= split) return t + object_ns + (double)((hi - lo) / 8) * word_ns;
  uint64_t mid = halve(lo, hi);
  t += object_ns; /* a split: the upper half pushed, both halves available */
  double a = pieces_finish(lo, mid, t, split, object_ns, word_ns);
  double b = pieces_finish(mid, hi, t, split, object_ns, word_ns);
  return a > b ? a : b;
}

/* When what word W of an object available at T found is available to
 * another marker: at the end of the scan of W's piece.  The drain pushes
 * a found object on its own stack's private part and shares only after
 * the range (mark.c), and a list's next node, found alone, it scans at
 * once: at the word's own time a list was 1.2 wide, its mark with two
 * markers predicted 14% shorter than with one where it took 2% longer. */
static double word_time(uint64_t bytes, uint64_t w, double t, uint64_t split, double object_ns,
                        double word_ns) {
  uint64_t lo = 0, hi = bytes;
  while (split && hi - lo > split) {
    uint64_t mid = halve(lo, hi);
    if (w * 8 < mid) hi = mid;
    else lo = mid;
    t += object_ns;
  }
  return t + object_ns + (double)((hi - lo) / 8) * word_ns;
}

bool graph_work(const struct snapshot *s, double object_ns, double word_ns, uint64_t split,
                struct graph_work *out) {
  memset(out, 0, sizeof *out);
  uint64_t n = s->header.objects, lone = predict_lone_split(split);
  for (uint64_t i = 0; i < n; i++) {
    const struct snapshot_object *o = &s->objects[i];
    uint64_t pieces = scanned(o) ? graph_pieces(o->bytes, split) : 1;
    uint64_t words = scanned(o) ? o->bytes / 8 : 0;
    out->pieces += pieces;
    out->lone_pieces += scanned(o) ? graph_pieces(o->bytes, lone) : 1;
    out->scanned_words += words;
  }
  out->t1_ns = (double)out->pieces * object_ns + (double)out->scanned_words * word_ns;
  out->t1_lone_ns = (double)out->lone_pieces * object_ns + (double)out->scanned_words * word_ns;
  uint64_t found = n - s->header.roots; /* each object is found once */
  out->repeat_edges = s->header.edges > found ? s->header.edges - found : 0;

  double *start = malloc((n ? n : 1) * sizeof *start);
  struct queue q = {0};
  bool ok = start != NULL;
  for (uint64_t i = 0; ok && i < n; i++) start[i] = i < s->header.roots ? 0 : -1;
  for (uint64_t i = 0; ok && i < s->header.roots; i++) ok = queue_push(&q, 0, (uint32_t)i);
  double longest = 0;
  while (ok && q.count) {
    double t;
    uint32_t i;
    queue_pop(&q, &t, &i);
    if (t > start[i]) continue; /* reached earlier by another path */
    const struct snapshot_object *o = &s->objects[i];
    double finish = scanned(o) ? pieces_finish(0, o->bytes, t, split, object_ns, word_ns)
                               : t + object_ns;
    if (finish > longest) longest = finish;
    for (uint64_t e = o->first_edge; ok && e < o->first_edge + o->edge_count; e++) {
      uint32_t target = s->edges[e].target;
      double at = word_time(o->bytes, s->edges[e].word, t, split, object_ns, word_ns);
      if (start[target] < 0 || at < start[target]) {
        start[target] = at;
        ok = queue_push(&q, at, target);
      }
    }
  }
  out->tinf_ns = longest;
  free(start);
  free(q.time);
  free(q.index);
  return ok;
}

/* ---- the cache ---- */

bool cache_init(struct cache_sim *c, uint64_t bytes, unsigned ways, unsigned line_bytes) {
  memset(c, 0, sizeof *c);
  unsigned shift = 0;
  while ((1u << shift) < line_bytes) shift++;
  if (!ways || (1u << shift) != line_bytes) return false;
  c->line_shift = shift;
  c->ways = ways;
  c->sets = (unsigned)(bytes / line_bytes / ways);
  if (!c->sets) return false;
  c->tags = calloc((size_t)c->sets * ways, sizeof *c->tags);
  return c->tags != NULL;
}

uint64_t cache_capacity_fit(const uint64_t *bytes, const double *ns, unsigned n, double miss_ns) {
  if (!n) return 0;
  uint64_t fit = bytes[0];
  double half = (ns[0] + miss_ns) / 2;
  for (unsigned i = 1; i < n && ns[i] < half; i++) fit = bytes[i];
  return fit;
}

bool cache_access(struct cache_sim *c, uint64_t address) {
  uint64_t line = address >> c->line_shift, tag = line + 1;
  uint64_t *set = &c->tags[(line % c->sets) * c->ways];
  c->accesses++;
  unsigned k = 0;
  while (k < c->ways && set[k] != tag) k++;
  bool miss = k == c->ways;
  if (miss) {
    c->misses++;
    k = c->ways - 1; /* the least recently used goes */
  }
  memmove(set + 1, set, k * sizeof *set);
  set[0] = tag;
  return miss;
}

void cache_free(struct cache_sim *c) {
  free(c->tags);
  c->tags = NULL;
}

/* ---- live lines: first and last access of every line ---- */

struct line_life {
  uint64_t *keys; /* line + 1, 0: empty */
  uint64_t *first, *last;
  uint64_t *range; /* the range that used it last */
  uint32_t *uses;  /* times another range than the last used it */
  size_t cap, used;
  uint64_t now;
};

static size_t line_slot(uint64_t key, size_t cap) {
  return (size_t)((key * 0x9E3779B97F4A7C15ull) >> (64 - __builtin_ctzll(cap)));
}

struct line_life *line_life_new(void) { return calloc(1, sizeof(struct line_life)); }

static bool line_life_grow(struct line_life *l) {
  size_t cap = l->cap ? 2 * l->cap : 1 << 12;
  uint64_t *keys = calloc(cap, sizeof *keys), *first = malloc(cap * sizeof *first),
           *last = malloc(cap * sizeof *last), *range = malloc(cap * sizeof *range);
  uint32_t *uses = malloc(cap * sizeof *uses);
  if (!keys || !first || !last || !range || !uses) {
    free(keys);
    free(first);
    free(last);
    free(range);
    free(uses);
    return false;
  }
  for (size_t i = 0; i < l->cap; i++) {
    if (!l->keys[i]) continue;
    size_t s = line_slot(l->keys[i], cap);
    while (keys[s]) s = (s + 1) & (cap - 1);
    keys[s] = l->keys[i];
    first[s] = l->first[i];
    last[s] = l->last[i];
    range[s] = l->range[i];
    uses[s] = l->uses[i];
  }
  free(l->keys);
  free(l->first);
  free(l->last);
  free(l->range);
  free(l->uses);
  l->keys = keys;
  l->first = first;
  l->last = last;
  l->range = range;
  l->uses = uses;
  l->cap = cap;
  return true;
}

uint64_t line_life_access_by(struct line_life *l, uint64_t line, uint64_t range) {
  if (2 * (l->used + 1) > l->cap && !line_life_grow(l)) return 0;
  uint64_t since = 0;
  uint64_t key = line + 1;
  size_t s = line_slot(key, l->cap);
  while (l->keys[s] && l->keys[s] != key) s = (s + 1) & (l->cap - 1);
  if (!l->keys[s]) {
    l->keys[s] = key;
    l->first[s] = l->now;
    l->range[s] = range;
    l->uses[s] = 0;
    l->used++;
  } else if (l->range[s] != range) {
    l->range[s] = range;
    l->uses[s]++;
    since = l->now - l->last[s];
  }
  l->last[s] = l->now++;
  return since;
}

void line_life_access(struct line_life *l, uint64_t line) { line_life_access_by(l, line, 0); }

double line_life_average(const struct line_life *l, double capacity) {
  if (!l->now) return 0;
  double sum = 0;
  for (size_t i = 0; i < l->cap; i++)
    if (l->keys[i]) sum += (double)(l->last[i] - l->first[i]);
  double average = sum / (double)l->now;
  return average < capacity ? average : capacity;
}

bool line_life_lines(const struct line_life *l, double capacity, struct graph_lines *out) {
  memset(out, 0, sizeof *out);
  out->capacity = capacity;
  size_t n = 0;
  for (size_t i = 0; i < l->cap; i++) n += l->keys[i] && l->uses[i];
  out->share = malloc((n ? n : 1) * sizeof *out->share);
  out->uses = malloc((n ? n : 1) * sizeof *out->uses);
  if (!out->share || !out->uses) return false;
  for (size_t i = 0; i < l->cap; i++) {
    if (!l->keys[i] || !l->uses[i]) continue;
    out->share[out->count] = (double)(l->last[i] - l->first[i]) / (double)l->now;
    out->uses[out->count++] = l->uses[i];
  }
  return true;
}

double graph_extra_misses(const void *lines, double cuts, double caches) {
  const struct graph_lines *g = lines;
  double extra = 0;
  for (size_t i = 0; i < g->count; i++) {
    double most = caches < g->uses[i] ? caches : g->uses[i], cut = cuts * g->share[i];
    extra += cut < most ? cut : most;
  }
  double full = caches * g->capacity; /* each further cache fills at most once */
  return extra < full ? extra : full;
}

void graph_lines_free(struct graph_lines *g) {
  free(g->share);
  free(g->uses);
  memset(g, 0, sizeof *g);
}

void line_life_free(struct line_life *l) {
  if (!l) return;
  free(l->keys);
  free(l->first);
  free(l->last);
  free(l->range);
  free(l->uses);
  free(l);
}

/* ---- the serial mark's access stream ---- */

/* The page headers, as sgc keeps them apart from the heap (heap.h): one
 * per page, HEADER_META bytes of fields the pointer test reads (kind,
 * size class, object start test), then a mark byte per 16-byte granule. */
enum { HEADER_META = 128 };
static uint64_t header_bytes(uint64_t page_bytes) { return HEADER_META + page_bytes / 16; }
static uint64_t header_address(uint64_t object, uint64_t page_bytes) {
  return (1ull << 60) + object / page_bytes * header_bytes(page_bytes);
}
static uint64_t mark_address(uint64_t object, uint64_t page_bytes) {
  return header_address(object, page_bytes) + HEADER_META + object % page_bytes / 16;
}

/* The SLO piece of an object of BYTES that byte offset AT falls in, as
 * markers that share split it (halve, down to SPLIT): its label, the
 * path of halvings with a leading 1 (unique within the object), and in
 * *END the piece's end. */
static uint64_t piece_at(uint64_t bytes, uint64_t at, uint64_t split, uint64_t *end) {
  uint64_t lo = 0, hi = bytes, label = 1;
  while (split && hi - lo > split) {
    uint64_t mid = halve(lo, hi);
    label = 2 * label + (at >= mid);
    if (at >= mid) lo = mid;
    else hi = mid;
  }
  *end = hi;
  return label;
}

unsigned graph_handoff_bucket(uint64_t d) {
  if (d < 4) return (unsigned)d;
  unsigned octave = 63 - (unsigned)__builtin_clzll(d);
  return 4 * octave + (unsigned)((d >> (octave - 2)) & 3);
}

double graph_handoff_distance(unsigned bucket) {
  if (bucket < 4) return bucket;
  unsigned octave = bucket / 4;
  return ldexp(4 + bucket % 4 + 0.5, (int)octave - 2);
}

double graph_handoffs(const void *misses, double cuts, unsigned p) {
  const struct graph_misses *g = misses;
  if (p < 2 || !g->mark_accesses) return 0;
  double sum = 0;
  for (unsigned b = 1; b < GRAPH_HANDOFF_BUCKETS; b++) {
    if (!g->mark_reuses[b]) continue;
    double apart = cuts * graph_handoff_distance(b) / (double)g->mark_accesses;
    sum += (double)g->mark_reuses[b] * (apart < 1 ? apart : 1);
  }
  return sum * (p - 1) / p;
}

struct sim {
  struct cache_sim cache;
  struct tlb_sim tlb;
  double tlb_ns; /* what the last access's translation cost */
  struct graph_misses *out;
  struct line_life *life;
  uint64_t range; /* the range fetched or scanned: a steal moves whole ranges */
  /* Mark bytes' lines by the SLO piece that used them last: the unit two
   * markers share. */
  struct line_life *marks;
  /* The work clock's steps (the profile's object_ns, word_ns) and a
   * streamed line's time (read_stream_ns; 0: no prefetcher). */
  double object_ns, word_ns, stream_ns;
  uint64_t last_page; /* the page cache's page + 1; 0: none */
  double node_accesses[PREDICT_MAX_NODES];
};

static bool touch(struct sim *m, uint64_t address, unsigned node) {
  line_life_access_by(m->life, address >> m->cache.line_shift, m->range);
  if (node < PREDICT_MAX_NODES) m->node_accesses[node]++;
  m->tlb_ns = tlb_access(&m->tlb, address);
  bool missed = cache_access(&m->cache, address);
  if (!missed) m->out->tlb_ns += m->tlb_ns; /* a cached line: its translation shows */
  return missed;
}

static int by_address(const void *a, const void *b) {
  uint64_t x = (*(const struct snapshot_object *const *)a)->address;
  uint64_t y = (*(const struct snapshot_object *const *)b)->address;
  return x < y ? -1 : x > y;
}

/* The mutator's last touch of every live object, in address order. */
static bool warm_up(struct cache_sim *c, const struct snapshot *s) {
  uint64_t n = s->header.objects;
  const struct snapshot_object **order = malloc((n ? n : 1) * sizeof *order);
  if (!order) return false;
  for (uint64_t i = 0; i < n; i++) order[i] = &s->objects[i];
  qsort(order, n, sizeof *order, by_address);
  uint64_t line = (uint64_t)1 << c->line_shift;
  for (uint64_t i = 0; i < n; i++)
    for (uint64_t a = order[i]->address & ~(line - 1); a < order[i]->address + order[i]->bytes; a += line)
      cache_access(c, a);
  free(order);
  c->accesses = c->misses = 0;
  return true;
}

/* The memory-level parallelism a marker's misses overlap by: the
 * dependent latency over the time per miss with a window's worth of
 * independent misses in flight (both measured by sgc-calibrate), at
 * most the window's depth; 1: none (the thesis's machines). */
double graph_mlp(const struct predict_profile *prof) {
  if (!(prof->read_overlap_ns > 0) || !(prof->read_miss_ns > prof->read_overlap_ns)) return 1;
  double mlp = prof->read_miss_ns / prof->read_overlap_ns;
  return mlp < PREDICT_PREFETCH_DEPTH ? mlp : PREDICT_PREFETCH_DEPTH;
}

double graph_overlap(double in_flight, double mlp) {
  double n = in_flight < mlp ? in_flight : mlp;
  return n > 1 ? 1 / n : 1;
}

/* The hardware's stream prefetcher, as the simulation sees it: the
 * lines of the last STREAMS misses; a miss within STREAM_REACH lines of
 * one of them, in the same 4 KiB page, was fetched ahead by it.  It
 * fetches while the marker works: a streamed line costs only the part
 * of the stream's time per line (STREAM_NS) that the marker's work since
 * that stream's last line (NOW - AT, on the work clock: object_ns a
 * range, word_ns a word) does not cover.  A profile without a stream
 * time (the thesis's machines) has no prefetcher to fetch ahead: its
 * streamed lines cost the latency whole, as before. */
enum { STREAMS = 16, STREAM_REACH = 2 };
struct streams {
  uint64_t line[STREAMS]; /* line + 1; 0: none */
  double at[STREAMS];     /* the work clock at the stream's last line */
  unsigned next;
  double now, stream_ns;
};

/* Whether LINE was streamed; *EXPOSED: the share of the stream's time
 * per line the marker waits for it. */
static bool streamed(struct streams *st, uint64_t line, unsigned line_shift, double *exposed) {
  unsigned page_shift = line_shift < 12 ? 12 - line_shift : 0;
  for (unsigned k = 0; k < STREAMS; k++) {
    if (!st->line[k]) continue;
    uint64_t t = st->line[k] - 1, d = t > line ? t - line : line - t;
    if (d && d <= STREAM_REACH && t >> page_shift == line >> page_shift) {
      double covered = st->now - st->at[k];
      *exposed = !(st->stream_ns > 0) ? 1 : st->stream_ns > covered ? 1 - covered / st->stream_ns : 0;
      st->line[k] = line + 1;
      st->at[k] = st->now;
      return true;
    }
  }
  st->line[st->next] = line + 1;
  st->at[st->next] = st->now;
  st->next = (st->next + 1) % STREAMS;
  return false;
}

/* A miss on ADDRESS with IN_FLIGHT misses outstanding (itself included);
 * TLB_NS: what its translation cost (a streamed line pays it, a
 * dependent miss's latency holds it). */
static void charge(struct graph_misses *out, struct streams *st, unsigned line_shift,
                   uint64_t address, double in_flight, double mlp, bool mark, double tlb_ns) {
  out->misses++;
  if (mark) out->mark_misses++;
  double exposed;
  if (streamed(st, address >> line_shift, line_shift, &exposed)) {
    out->streamed++;
    out->stream_exposed += exposed;
    if (mark) {
      out->mark_streamed++;
      out->mark_stream_exposed += exposed;
    }
    out->tlb_ns += tlb_ns;
    return;
  }
  double share = graph_overlap(in_flight, mlp);
  if (mark) out->mark_dependent += share;
  else out->object_dependent += share;
  if (share < 1) {
    if (mark) out->mark_overlapped += share;
    else out->object_overlapped += share;
  }
}

/* One serial mark of S through M's cache (depth first, last found first,
 * through the marker's prefetch window), its misses charged to M's out. */
static void mark_pass(struct sim *m, const struct snapshot *s, double mlp, uint8_t *marked,
                      uint32_t *stack) {
  struct graph_misses *out = m->out;
  size_t top = 0;
  /* The prefetch window as mark_drain_own keeps it: ranges popped into a
   * FIFO of PREDICT_PREFETCH_DEPTH, each one's first line fetched as it
   * enters; a range popped with the window empty and nothing else on the
   * stack is scanned at once (a list: nothing to overlap with). */
  uint32_t window[PREDICT_PREFETCH_DEPTH];
  bool window_missed[PREDICT_PREFETCH_DEPTH];
  double window_tlb_ns[PREDICT_PREFETCH_DEPTH];
  unsigned first = 0, count = 0, pending = 0; /* PENDING: window entries whose fetch missed */
  struct streams st = {.stream_ns = m->stream_ns};
  unsigned shift = m->cache.line_shift;
  uint64_t page = s->header.page_bytes ? s->header.page_bytes : 4096;
  uint64_t split = s->header.split_bytes;
  /* The roots in the order they were pushed: the last is popped first. */
  for (uint64_t i = 0; i < s->header.roots; i++) stack[top++] = (uint32_t)i;
  for (;;) {
    uint32_t index;
    bool fetched_missed = false, alone = false;
    while (count < PREDICT_PREFETCH_DEPTH && top) {
      index = stack[--top];
      if (count == 0 && top == 0) {
        alone = true;
        break;
      }
      const struct snapshot_object *o = &s->objects[index];
      m->range = index;
      bool missed = touch(m, o->address, o->node);
      if (index >= s->header.roots) out->windowed++;
      unsigned slot = (first + count++) % PREDICT_PREFETCH_DEPTH;
      window[slot] = index;
      window_missed[slot] = missed;
      window_tlb_ns[slot] = m->tlb_ns;
      pending += missed;
    }
    if (!alone) {
      if (!count) break;
      index = window[first];
      fetched_missed = window_missed[first];
      double fetch_tlb_ns = window_tlb_ns[first];
      first = (first + 1) % PREDICT_PREFETCH_DEPTH;
      count--;
      /* Its fetch overlapped the others still outstanding. */
      if (fetched_missed) {
        charge(out, &st, shift, s->objects[index].address, pending, mlp, false, fetch_tlb_ns);
        pending--;
      }
    }
    const struct snapshot_object *o = &s->objects[index];
    const struct snapshot_edge *e = &s->edges[o->first_edge], *end = e + o->edge_count;
    m->range = index;
    st.now += m->object_ns;
    uint64_t piece = 0, piece_end = 0;
    for (uint64_t w = 0; w < o->bytes / 8; w++, st.now += m->word_ns) {
      uint64_t address = o->address + 8 * w;
      if (8 * w >= piece_end) piece = (uint64_t)index << 32 | piece_at(o->bytes, 8 * w, split, &piece_end);
      /* Read while the window's fetches are outstanding (alone: none). */
      if (touch(m, address, o->node)) charge(out, &st, shift, address, pending + 1, mlp, false, m->tlb_ns);
      for (; e < end && e->word == w; e++) {
        const struct snapshot_object *t = &s->objects[e->target];
        if (t->address / page + 1 != m->last_page) {
          out->page_walks++;
          m->last_page = t->address / page + 1;
        }
        /* The pointer test reads the target page's header, then its mark byte. */
        uint64_t header = header_address(t->address, page), mark = mark_address(t->address, page);
        uint64_t since = line_life_access_by(m->marks, mark >> shift, piece);
        out->mark_accesses++;
        if (since) out->mark_reuses[graph_handoff_bucket(since)]++;
        if (touch(m, header, t->node)) charge(out, &st, shift, header, pending + 1, mlp, true, m->tlb_ns);
        if (touch(m, mark, t->node)) charge(out, &st, shift, mark, pending + 1, mlp, true, m->tlb_ns);
        if (marked[e->target]) continue;
        marked[e->target] = 1;
        if (scanned(t)) stack[top++] = e->target; /* each object once: N entries suffice */
      }
    }
  }
}

bool graph_misses(const struct snapshot *s, const struct predict_profile *prof, int warm,
                  struct graph_misses *out) {
  memset(out, 0, sizeof *out);
  struct sim m;
  memset(&m, 0, sizeof m);
  if (!cache_init(&m.cache, prof->cache_bytes, prof->cache_ways, prof->line_bytes)) return false;
  m.out = out;
  m.object_ns = prof->object_ns;
  m.word_ns = prof->word_ns;
  m.stream_ns = prof->read_stream_ns;
  if (!tlb_init(&m.tlb, prof)) {
    cache_free(&m.cache);
    return false;
  }
  if (warm == GRAPH_WARM && !warm_up(&m.cache, s)) {
    cache_free(&m.cache);
    return false;
  }
  double mlp = graph_mlp(prof);
  uint64_t n = s->header.objects;
  uint8_t *marked = calloc(n ? n : 1, 1);
  uint32_t *stack = malloc((n ? n : 1) * sizeof *stack);
  bool ok = marked && stack;
  if (ok && warm == GRAPH_REPEAT) {
    /* The same mark once before: what a collection that follows another
     * of the same heap finds cached (the lines the program touched in
     * between left aside). */
    struct graph_misses scratch;
    memset(&scratch, 0, sizeof scratch);
    m.out = &scratch;
    m.life = line_life_new();
    m.marks = line_life_new();
    ok = m.life && m.marks;
    if (ok) mark_pass(&m, s, mlp, marked, stack);
    line_life_free(m.life);
    line_life_free(m.marks);
    memset(marked, 0, n ? n : 1);
    memset(m.node_accesses, 0, sizeof m.node_accesses);
    m.cache.accesses = m.cache.misses = 0;
    m.last_page = 0;
    m.out = out;
  }
  m.life = ok ? line_life_new() : NULL;
  m.marks = ok ? line_life_new() : NULL;
  ok = ok && m.life && m.marks;
  if (ok) mark_pass(&m, s, mlp, marked, stack);
  out->push_ns = (double)out->windowed * prof->push_ns;
  out->accesses = m.cache.accesses;
  double lines = (double)prof->cache_bytes / prof->line_bytes;
  if (ok) out->live_lines = line_life_average(m.life, lines);
  if (ok) ok = line_life_lines(m.life, lines, &out->lines);
  out->nodes = s->header.nodes ? s->header.nodes : 1;
  if (out->nodes > PREDICT_MAX_NODES) out->nodes = PREDICT_MAX_NODES;
  for (unsigned j = 0; j < out->nodes; j++)
    out->node_share[j] = out->accesses ? m.node_accesses[j] / (double)out->accesses : 0;
  if (!out->accesses) out->node_share[0] = 1;
  cache_free(&m.cache);
  tlb_free(&m.tlb);
  line_life_free(m.life);
  line_life_free(m.marks);
  free(marked);
  free(stack);
  return ok;
}

double graph_miss_ns(const struct graph_misses *g, const struct predict_profile *prof,
                     double object_remote, double mark_remote, bool rmw) {
  if (!(g->misses > 0)) return 0;
  double local = prof->read_miss_ns, remote = prof->read_remote_miss_ns;
  double object_ns = (1 - object_remote) * local + object_remote * remote;
  double mark_ns = (1 - mark_remote) * local + mark_remote * remote;
  /* Streamed lines cost the bandwidth's time, slower from afar as the
   * latency is. */
  double stream = prof->read_stream_ns > 0 ? prof->read_stream_ns : local;
  double object_stream = local > 0 ? stream * object_ns / local : stream;
  double mark_stream = local > 0 ? stream * mark_ns / local : stream;
  double total = g->object_dependent * object_ns +
                 (g->stream_exposed - g->mark_stream_exposed) * object_stream;
  if (rmw) /* a locked instruction waits for its line: no overlap */
    total += g->mark_misses *
             ((1 - mark_remote) * prof->rmw_miss_ns + mark_remote * prof->rmw_remote_miss_ns);
  else total += g->mark_dependent * mark_ns + g->mark_stream_exposed * mark_stream;
  /* The pushes' work runs beside the overlapped misses (graph.h): up to
   * its length of their cost is hidden. */
  double overlapped = g->object_overlapped * object_ns + (rmw ? 0 : g->mark_overlapped * mark_ns);
  total -= overlapped < g->push_ns ? overlapped : g->push_ns;
  /* The translations of cached and streamed lines, within the misses'
   * cost (Q_1 M_1 holds them). */
  total += g->tlb_ns;
  return total / g->misses;
}

/* A NUMA machine's inputs (graph.h). */
void graph_numa_input(const struct graph_misses *g, const struct predict_profile *prof,
                      const double *shares, double remote, bool bmb, bool rmw,
                      struct predict_input *in) {
  unsigned n = prof->nodes;
  double total = 0, even = (double)(n - 1) / n;
  for (unsigned j = 0; shares && j < n; j++) total += shares[j];
  double object_misses = g->misses - g->mark_misses;
  unsigned home = 0;
  for (unsigned j = 1; shares && j < n; j++)
    if (shares[j] > shares[home]) home = j;
  in->nodes = n;
  for (unsigned j = 0; j < n; j++) {
    double object_share = shares && total > 0 ? shares[j] / total : 1.0 / n;
    double mark_share = bmb ? 1.0 / n : j == home;
    in->node_share[j] =
        g->misses > 0 ? (object_misses * object_share + g->mark_misses * mark_share) / g->misses : 1.0 / n;
  }
  in->miss_ns = graph_miss_ns(g, prof, remote >= 0 ? remote : even, even, rmw);
}
