/*
 * cube: Rubik's cube search (thesis §1.1, §3.5).
 *
 * From a scrambled cube (-x (30) random face turns from a fixed seed), each
 * iteration generates every state within -d (3) face turns of each state in
 * the frontier (consecutive turns of the same face are skipped), as GC
 * objects, keeps the best -k (20) distinct states by the heuristic "number
 * of stickers that match their face's centre", and repeats -i (100) times.
 * Work items (frontier state, first move) are dealt to the -t threads by an
 * atomic counter; every generated state stays alive (in per-thread lists)
 * until the end of its iteration, and each state points to its parent, so
 * the frontier keeps its whole history alive through parent chains.
 *
 * The selection order is total (score, then sticker array), so the result
 * does not depend on the thread count: the hash can be compared across runs.
 *
 * Check: (1) every frontier state's parent chain, replayed move by move
 * from the scrambled start, reproduces its stickers (the chain crosses all
 * iterations, so old states must have survived every collection); (2) each
 * colour appears 9 times; (3) after the timed part, the first and the last
 * iteration are recomputed by a sequential depth-first search that
 * allocates nothing, and must select exactly the same states.
 */
#include <stdatomic.h>

#include "bench_common.h"

#define NSTK 54
#define NMOVES 18
#define MAXK 256

typedef struct State {
  struct State *parent;
  uint8_t move, depth, score, pad;
  uint8_t s[NSTK];
} State;

/* Per-thread record of this iteration's states (keeps them alive until
 * the iteration ends, without linking the states themselves). */
#define CHUNK 510
typedef struct Chunk {
  struct Chunk *prev;
  long n;
  State *items[CHUNK];
} Chunk;

static uint8_t perm[NMOVES][NSTK]; /* new[i] = old[perm[m][i]] */
static int depth_limit = 3, best_k = 20, iterations = 100, scramble = 30, nthreads = 1;

/* ---- cube geometry ---------------------------------------------------- */
/* Sticker i: face f = i / 9 with normal n_f; position p (cubie coords in
 * {-1,0,1}^3).  Faces: 0 U(+y) 1 D(-y) 2 F(+z) 3 B(-z) 4 R(+x) 5 L(-x). */
static int st_pos[NSTK][3], st_nrm[NSTK][3];

static void rot(int axis, const int *v, int *out) { /* quarter turn about axis */
  int x = v[0], y = v[1], z = v[2];
  switch (axis) {
    case 0: out[0] = x; out[1] = -z; out[2] = y; break;
    case 1: out[0] = z; out[1] = y; out[2] = -x; break;
    default: out[0] = -y; out[1] = x; out[2] = z; break;
  }
}

static int find_sticker(const int *p, const int *n) {
  for (int i = 0; i < NSTK; i++)
    if (memcmp(st_pos[i], p, sizeof st_pos[i]) == 0 && memcmp(st_nrm[i], n, sizeof st_nrm[i]) == 0)
      return i;
  return -1;
}

static void init_geometry(void) {
  static const int normals[6][3] = {{0, 1, 0}, {0, -1, 0}, {0, 0, 1},
                                    {0, 0, -1}, {1, 0, 0}, {-1, 0, 0}};
  for (int f = 0; f < 6; f++) {
    int axis = normals[f][0] ? 0 : normals[f][1] ? 1 : 2;
    int a1 = (axis + 1) % 3, a2 = (axis + 2) % 3, k = 0;
    for (int u = -1; u <= 1; u++)
      for (int v = -1; v <= 1; v++, k++) {
        int i = f * 9 + k;
        memcpy(st_nrm[i], normals[f], sizeof st_nrm[i]);
        st_pos[i][axis] = normals[f][axis];
        st_pos[i][a1] = u;
        st_pos[i][a2] = v;
      }
  }
  for (int f = 0; f < 6; f++) {
    int axis = normals[f][0] ? 0 : normals[f][1] ? 1 : 2;
    int sign = normals[f][axis];
    uint8_t q[NSTK]; /* quarter turn: sticker at i moves to q[i] */
    for (int i = 0; i < NSTK; i++) {
      if (st_pos[i][axis] != sign) {
        q[i] = (uint8_t)i;
        continue;
      }
      int p[3], n[3];
      rot(axis, st_pos[i], p);
      rot(axis, st_nrm[i], n);
      int j = find_sticker(p, n);
      if (j < 0) {
        fprintf(stderr, "cube: geometry error\n");
        exit(3);
      }
      q[i] = (uint8_t)j;
    }
    /* compose 1, 2, 3 quarter turns: dest[m] maps i -> position after m turns */
    uint8_t dest[NSTK];
    for (int i = 0; i < NSTK; i++) dest[i] = (uint8_t)i;
    for (int t = 0; t < 3; t++) {
      for (int i = 0; i < NSTK; i++) dest[i] = q[dest[i]];
      int m = f * 3 + t;
      for (int i = 0; i < NSTK; i++) perm[m][dest[i]] = (uint8_t)i;
    }
  }
}

static inline void apply(const uint8_t *in, int m, uint8_t *out) {
  const uint8_t *p = perm[m];
  for (int i = 0; i < NSTK; i++) out[i] = in[p[i]];
}

static inline int score_of(const uint8_t *s) {
  int sc = 0;
  for (int i = 0; i < NSTK; i++) sc += s[i] == s[(i / 9) * 9 + 4];
  return sc;
}

/* total order: higher score first, then smaller sticker array */
static inline int better(int sa, const uint8_t *a, int sb, const uint8_t *b) {
  if (sa != sb) return sa > sb;
  return memcmp(a, b, NSTK) < 0;
}

/* ---- a top-k set of distinct states (pointers or copies) ------------ */
typedef struct {
  int n;
  int score[MAXK];
  const uint8_t *stk[MAXK];
  State *state[MAXK];
} TopK;

static void topk_offer(TopK *t, int sc, const uint8_t *stk, State *st) {
  if (t->n == best_k && !better(sc, stk, t->score[t->n - 1], t->stk[t->n - 1])) return;
  int pos = t->n;
  while (pos > 0 && better(sc, stk, t->score[pos - 1], t->stk[pos - 1])) pos--;
  /* a duplicate would compare equal: it sits right before pos */
  if (pos > 0 && t->score[pos - 1] == sc && memcmp(t->stk[pos - 1], stk, NSTK) == 0) return;
  int last = t->n < best_k ? t->n : best_k - 1;
  for (int i = last; i > pos; i--) {
    t->score[i] = t->score[i - 1];
    t->stk[i] = t->stk[i - 1];
    t->state[i] = t->state[i - 1];
  }
  t->score[pos] = sc;
  t->stk[pos] = stk;
  t->state[pos] = st;
  if (t->n < best_k) t->n++;
}

/* ---- parallel search --------------------------------------------------- */
static State *frontier[MAXK]; /* static: a root for the collector */
static int nfrontier;
static _Atomic int next_item;
static pthread_barrier_t barrier;

typedef struct {
  int id;
  long generated;
  Chunk *list; /* this iteration's states: kept alive until it ends */
  TopK top;
} Worker;

static Worker *workers;

static void remember(Worker *w, State *c) {
  if (!w->list || w->list->n == CHUNK) {
    Chunk *k = (Chunk *)bench_xmalloc(sizeof(Chunk));
    k->prev = w->list;
    k->n = 0;
    w->list = k;
  }
  w->list->items[w->list->n++] = c;
}

static void expand(Worker *w, State *st, int last_face, int depth) {
  if (depth == depth_limit) return;
  for (int m = 0; m < NMOVES; m++) {
    if (m / 3 == last_face) continue;
    State *c = (State *)bench_xmalloc(sizeof(State));
    apply(st->s, m, c->s);
    c->parent = st;
    c->move = (uint8_t)m;
    c->depth = (uint8_t)(depth + 1);
    c->score = (uint8_t)score_of(c->s);
    remember(w, c);
    w->generated++;
    topk_offer(&w->top, c->score, c->s, c);
    expand(w, c, m / 3, depth + 1);
  }
}

static void *worker(void *arg) {
  Worker *w = (Worker *)arg;
  for (int it = 0; it < iterations; it++) {
    w->top.n = 0;
    w->list = NULL;
    int nitems = nfrontier * NMOVES;
    for (;;) {
      int k = atomic_fetch_add(&next_item, 1);
      if (k >= nitems) break;
      State *root = frontier[k / NMOVES];
      int m = k % NMOVES;
      State *c = (State *)bench_xmalloc(sizeof(State));
      apply(root->s, m, c->s);
      c->parent = root;
      c->move = (uint8_t)m;
      c->depth = 1;
      c->score = (uint8_t)score_of(c->s);
      remember(w, c);
      w->generated++;
      topk_offer(&w->top, c->score, c->s, c);
      expand(w, c, m / 3, 1);
    }
    pthread_barrier_wait(&barrier);
    if (w->id == 0) {
      TopK all;
      all.n = 0;
      for (int t = 0; t < nthreads; t++)
        for (int i = 0; i < workers[t].top.n; i++)
          topk_offer(&all, workers[t].top.score[i], workers[t].top.stk[i], workers[t].top.state[i]);
      for (int i = 0; i < all.n; i++) frontier[i] = all.state[i];
      nfrontier = all.n;
      atomic_store(&next_item, 0);
    }
    pthread_barrier_wait(&barrier);
    w->list = NULL; /* this iteration's states become garbage except the frontier's chains */
  }
  return NULL;
}

/* ---- reference: sequential search without allocation ----------------- */
typedef struct {
  TopK top;
  uint8_t store[MAXK][NSTK]; /* copies of the kept stickers */
} RefTop;

static void ref_offer(RefTop *r, const uint8_t *stk) {
  int sc = score_of(stk);
  TopK *t = &r->top;
  if (t->n == best_k && !better(sc, stk, t->score[t->n - 1], t->stk[t->n - 1])) return;
  /* find a free storage slot: the one not referenced by the first n-? entries */
  static uint8_t tmp[NSTK];
  memcpy(tmp, stk, NSTK);
  int before = t->n;
  const uint8_t *evicted = before == best_k ? t->stk[best_k - 1] : NULL;
  topk_offer(t, sc, tmp, NULL);
  /* locate the entry that points at tmp and give it permanent storage */
  for (int i = 0; i < t->n; i++)
    if (t->stk[i] == tmp) {
      uint8_t *slot = evicted ? (uint8_t *)evicted : r->store[before];
      memcpy(slot, tmp, NSTK);
      t->stk[i] = slot;
    }
}

static void ref_dfs(RefTop *r, const uint8_t *s, int last_face, int depth) {
  if (depth == depth_limit) return;
  uint8_t c[NSTK];
  for (int m = 0; m < NMOVES; m++) {
    if (m / 3 == last_face) continue;
    apply(s, m, c);
    ref_offer(r, c);
    ref_dfs(r, c, m / 3, depth + 1);
  }
}

static int ref_check(const uint8_t (*from)[NSTK], int nfrom, const uint8_t (*expect)[NSTK],
                     int nexpect, const char *what) {
  static RefTop r;
  memset(&r, 0, sizeof r);
  for (int i = 0; i < nfrom; i++) ref_dfs(&r, from[i], -1, 0);
  if (r.top.n != nexpect) {
    bench_fail("%s iteration: reference keeps %d states, search kept %d", what, r.top.n, nexpect);
    return 0;
  }
  for (int i = 0; i < nexpect; i++)
    if (memcmp(r.top.stk[i], expect[i], NSTK) != 0) {
      bench_fail("%s iteration: state %d differs from the sequential reference", what, i);
      return 0;
    }
  return 1;
}

int main(int argc, char **argv) {
  int opt;
  while ((opt = getopt(argc, argv, "t:d:k:i:x:h")) != -1) {
    switch (opt) {
      case 't': nthreads = (int)bench_arg_long("-t", optarg, 1, 4096); break;
      case 'd': depth_limit = (int)bench_arg_long("-d", optarg, 1, 6); break;
      case 'k': best_k = (int)bench_arg_long("-k", optarg, 1, MAXK); break;
      case 'i': iterations = (int)bench_arg_long("-i", optarg, 1, 1 << 20); break;
      case 'x': scramble = (int)bench_arg_long("-x", optarg, 0, 1 << 20); break;
      default:
        BENCH_USAGE_EXIT("usage: cube [-t threads] [-d depth] [-k keep_best] [-i iterations] [-x scramble]\n");
    }
  }
  GC_INIT();
  bench_marked_init();
  init_geometry();
  /* sanity of the move tables: a quarter turn four times is the identity */
  {
    uint8_t a[NSTK], b[NSTK];
    for (int i = 0; i < NSTK; i++) a[i] = (uint8_t)i;
    for (int m = 0; m < NMOVES; m += 3) {
      memcpy(b, a, NSTK);
      uint8_t c[NSTK];
      for (int k = 0; k < 4; k++) {
        apply(b, m, c);
        memcpy(b, c, NSTK);
      }
      if (memcmp(a, b, NSTK)) bench_fail("move %d: four quarter turns are not the identity", m);
    }
  }
  /* scrambled start */
  State *start = (State *)bench_xmalloc(sizeof(State));
  for (int i = 0; i < NSTK; i++) start->s[i] = (uint8_t)(i / 9);
  bench_rng rng = {777};
  for (int k = 0; k < scramble; k++) {
    uint8_t c[NSTK];
    apply(start->s, (int)bench_rng_below(&rng, NMOVES), c);
    memcpy(start->s, c, NSTK);
  }
  start->score = (uint8_t)score_of(start->s);
  frontier[0] = start;
  nfrontier = 1;
  uint8_t start_stk[1][NSTK];
  memcpy(start_stk[0], start->s, NSTK);

  pthread_barrier_init(&barrier, NULL, (unsigned)nthreads);
  workers = (Worker *)bench_xmalloc(sizeof(Worker) * (size_t)nthreads); /* holds GC pointers */
  memset(workers, 0, sizeof(Worker) * (size_t)nthreads);
  for (int i = 0; i < nthreads; i++) workers[i].id = i;

  /* to check the first and last iterations we need their inputs and outputs:
   * run iteration 1 alone, then the rest */
  static uint8_t first_out[MAXK][NSTK], last_in[MAXK][NSTK], last_out[MAXK][NSTK];
  int n_first_out = 0, n_last_in = 0;
  int total_iters = iterations;
  double t0 = bench_now();
  for (int phase = 0; phase < 3; phase++) {
    int its = phase == 0 ? 1 : phase == 1 ? total_iters - 2 : 1;
    if (its <= 0 || (phase == 2 && total_iters < 2)) continue;
    if (phase == 2) {
      n_last_in = nfrontier;
      for (int i = 0; i < nfrontier; i++) memcpy(last_in[i], frontier[i]->s, NSTK);
    }
    iterations = its;
    if (nthreads == 1) worker(&workers[0]);
    else bench_run_threads(nthreads, worker, workers, sizeof(Worker));
    if (phase == 0) {
      n_first_out = nfrontier;
      for (int i = 0; i < nfrontier; i++) memcpy(first_out[i], frontier[i]->s, NSTK);
    }
  }
  double wall = bench_now() - t0;
  iterations = total_iters;
  for (int i = 0; i < nfrontier; i++) memcpy(last_out[i], frontier[i]->s, NSTK);

  /* (1) replay parent chains, (2) colour counts */
  long generated = 0;
  for (int t = 0; t < nthreads; t++) generated += workers[t].generated;
  uint64_t h = 0;
  for (int i = 0; i < nfrontier; i++) {
    const State *st = frontier[i];
    int moves[1 << 16], nm = 0;
    const State *p = st;
    while (p->parent && nm < (1 << 16)) {
      moves[nm++] = p->move;
      p = p->parent;
    }
    if (p != start) {
      bench_fail("frontier state %d: parent chain does not reach the start state", i);
      continue;
    }
    uint8_t s[NSTK], c[NSTK];
    memcpy(s, start_stk[0], NSTK);
    for (int k = nm - 1; k >= 0; k--) {
      apply(s, moves[k], c);
      memcpy(s, c, NSTK);
    }
    if (memcmp(s, st->s, NSTK) != 0) bench_fail("frontier state %d: replayed moves disagree", i);
    int cnt[6] = {0};
    for (int k = 0; k < NSTK; k++) cnt[st->s[k] < 6 ? st->s[k] : 0]++;
    for (int k = 0; k < 6; k++)
      if (cnt[k] != 9) bench_fail("frontier state %d: colour %d appears %d times", i, k, cnt[k]);
    h = bench_mix(h, (uint64_t)st->score);
    for (int k = 0; k < NSTK; k += 8) {
      uint64_t v = 0;
      memcpy(&v, st->s + k, (size_t)(NSTK - k < 8 ? NSTK - k : 8));
      h = bench_mix(h, v);
    }
  }
  /* (3) sequential reference for the first and the last iteration */
  double tr0 = bench_now();
  ref_check((const uint8_t(*)[NSTK])start_stk, 1, (const uint8_t(*)[NSTK])first_out, n_first_out,
            "first");
  if (total_iters >= 2)
    ref_check((const uint8_t(*)[NSTK])last_in, n_last_in, (const uint8_t(*)[NSTK])last_out,
              nfrontier, "last");
  double ref_s = bench_now() - tr0;

  bench_result_begin("cube", nthreads, wall);
  bench_kv("iterations", "%d", total_iters);
  bench_kv("depth", "%d", depth_limit);
  bench_kv("states", "%ld", generated);
  bench_kv("allocs", "%ld", generated);
  bench_kv("mops", "%.3f", (double)generated / wall / 1e6);
  bench_kv("best_score", "%d", nfrontier ? frontier[0]->score : 0);
  bench_kv("ref_s", "%.3f", ref_s);
  bench_kv("hash", "%016llx", (unsigned long long)h);
  return bench_result_end();
}
