/*
 * cky: CKY chart parser (thesis §1.1, §2.4.3, §3.5).
 *
 * A random ambiguous context-free grammar in Chomsky normal form is
 * generated from a seed (-S, 2001): -g (24) nonterminals (symbol 0 is the
 * start symbol S), the rule S -> S S plus -R (2) random binary rules
 * A -> B C per nonterminal, a vocabulary of -V (120) words, each an S and
 * 0-2 other preterminals (so every span parses, in Catalan-many ways).
 * -n (50) sentences of -l..-L (36..100) random words are parsed one after
 * another.
 *
 * For each sentence the chart is ONE large GC object of (len+1)^2 cell
 * pointers.  Cell [i][j] holds a linked list of Items (one per nonterminal
 * that derives words i..j-1); each Item holds a linked list of Derivs (one
 * per rule and split point that produces it, pointing to the two child
 * Items) and the number of parse trees of its span (mod 2^64).  Cells of
 * one span length are filled in parallel by the -t threads (dealt by an
 * atomic counter), with a barrier between lengths.  The chart is dropped
 * after the sentence, so all of it becomes garbage.
 *
 * Check: before the timed part, a counting DP without any allocation (bit
 * masks and tree counts in malloc'ed arrays) computes for every sentence
 * the number of Items, the number of Derivs and the number of parse trees
 * of the start symbol; the parser's chart must match all three.  For
 * sentences selected by -v (every 8th by default, plus the last) every
 * Deriv is also walked: its children must be Items of the rule's symbols
 * in the right cells, and the tree counts must add up.
 */
#include <stdatomic.h>

#include "bench_common.h"

#define MAXNT 64

typedef struct Item Item;
typedef struct Deriv {
  struct Deriv *next;
  Item *left, *right;
  int split;
  int rule;
} Deriv;

struct Item {
  Item *next;
  int nt;
  int nderiv;
  uint64_t trees;
  Deriv *derivs;
};

typedef struct {
  int a, b, c;
} Rule;

static int nnt = 24, rules_per_nt = 2, vocab = 120, nsent = 50, minlen = 36, maxlen = 100;
static int nthreads = 1, verify_every = 8;
static uint64_t seed = 2001;

static Rule *rules;
static int nrules;
/* rules indexed by their first right-hand symbol B */
static int *rules_by_b_start, *rules_by_b; /* CSR */
static uint64_t *word_nts;                   /* preterminal mask per word */
static int **sentences;
static int *sent_len;

/* reference numbers from the counting DP */
static long *ref_items, *ref_derivs;
static uint64_t *ref_trees;

static void make_grammar(void) {
  bench_rng r = {seed};
  /* rule 0 is S -> S S and every word can be an S: every span parses as
   * S in Catalan-many ways, so the grammar is ambiguous whatever the seed;
   * the random rules add the irregular part. */
  nrules = 1 + nnt * rules_per_nt;
  rules = (Rule *)calloc((size_t)nrules, sizeof(Rule));
  rules[0].a = rules[0].b = rules[0].c = 0;
  for (int a = 0, k = 1; a < nnt; a++)
    for (int j = 0; j < rules_per_nt; j++, k++) {
      rules[k].a = a;
      rules[k].b = (int)bench_rng_below(&r, (uint32_t)nnt);
      rules[k].c = (int)bench_rng_below(&r, (uint32_t)nnt);
    }
  rules_by_b_start = (int *)calloc((size_t)nnt + 1, sizeof(int));
  rules_by_b = (int *)calloc((size_t)nrules, sizeof(int));
  for (int k = 0; k < nrules; k++) rules_by_b_start[rules[k].b + 1]++;
  for (int b = 0; b < nnt; b++) rules_by_b_start[b + 1] += rules_by_b_start[b];
  int *fill = (int *)calloc((size_t)MAXNT, sizeof(int));
  for (int k = 0; k < nrules; k++) {
    int b = rules[k].b;
    rules_by_b[rules_by_b_start[b] + fill[b]++] = k;
  }
  free(fill);
  word_nts = (uint64_t *)calloc((size_t)vocab, sizeof(uint64_t));
  for (int w = 0; w < vocab; w++) {
    int n = (int)bench_rng_below(&r, 3);
    word_nts[w] = 1; /* S */
    for (int j = 0; j < n; j++) word_nts[w] |= 1ULL << bench_rng_below(&r, (uint32_t)nnt);
  }
  sentences = (int **)calloc((size_t)nsent, sizeof(int *));
  sent_len = (int *)calloc((size_t)nsent, sizeof(int));
  for (int s = 0; s < nsent; s++) {
    int len = minlen + (int)bench_rng_below(&r, (uint32_t)(maxlen - minlen + 1));
    sent_len[s] = len;
    sentences[s] = (int *)calloc((size_t)len, sizeof(int));
    for (int i = 0; i < len; i++) sentences[s][i] = (int)bench_rng_below(&r, (uint32_t)vocab);
  }
}

/* ---- the reference: counting DP, no GC allocation ------------------- */
static void reference(int s) {
  int n = sent_len[s];
  size_t w = (size_t)n + 1;
  uint64_t *mask = (uint64_t *)calloc(w * w, sizeof(uint64_t));
  uint64_t *trees = (uint64_t *)calloc(w * w * (size_t)nnt, sizeof(uint64_t));
  long items = 0, derivs = 0;
  for (int i = 0; i < n; i++) {
    uint64_t m = word_nts[sentences[s][i]];
    mask[(size_t)i * w + (size_t)i + 1] = m;
    for (int a = 0; a < nnt; a++)
      if (m >> a & 1) trees[((size_t)i * w + (size_t)i + 1) * (size_t)nnt + (size_t)a] = 1;
    items += __builtin_popcountll(m);
  }
  for (int len = 2; len <= n; len++)
    for (int i = 0; i + len <= n; i++) {
      int j = i + len;
      uint64_t m = 0;
      uint64_t *t = &trees[((size_t)i * w + (size_t)j) * (size_t)nnt];
      for (int k = i + 1; k < j; k++) {
        uint64_t ml = mask[(size_t)i * w + (size_t)k], mr = mask[(size_t)k * w + (size_t)j];
        if (!ml || !mr) continue;
        const uint64_t *tl = &trees[((size_t)i * w + (size_t)k) * (size_t)nnt];
        const uint64_t *tr = &trees[((size_t)k * w + (size_t)j) * (size_t)nnt];
        for (uint64_t bl = ml; bl; bl &= bl - 1) {
          int b = __builtin_ctzll(bl);
          for (int q = rules_by_b_start[b]; q < rules_by_b_start[b + 1]; q++) {
            const Rule *ru = &rules[rules_by_b[q]];
            if (!(mr >> ru->c & 1)) continue;
            derivs++;
            m |= 1ULL << ru->a;
            t[ru->a] += tl[b] * tr[ru->c];
          }
        }
      }
      mask[(size_t)i * w + (size_t)j] = m;
      items += __builtin_popcountll(m);
    }
  ref_items[s] = items;
  ref_derivs[s] = derivs;
  ref_trees[s] = trees[((size_t)0 * w + (size_t)n) * (size_t)nnt + 0];
  free(mask);
  free(trees);
}

/* ---- the parser ------------------------------------------------------- */
static Item **chart; /* current sentence's chart (a GC object) */
static int cur_len, cur_sent;
static _Atomic int next_cell;
static _Atomic long n_items, n_derivs;
static pthread_barrier_t barrier;
static int fail_flag;

static Item *new_item(int nt) {
  Item *it = (Item *)bench_xmalloc(sizeof(Item));
  it->nt = nt;
  it->next = NULL;
  it->nderiv = 0;
  it->trees = 0;
  it->derivs = NULL;
  return it;
}

static void fill_cell(int i, int j, long *items, long *derivs) {
  size_t w = (size_t)cur_len + 1;
  Item *by_nt[MAXNT];
  Item *right_idx[MAXNT];
  memset(by_nt, 0, sizeof by_nt);
  Item *head = NULL, *tail = NULL;
  for (int k = i + 1; k < j; k++) {
    Item *left = chart[(size_t)i * w + (size_t)k];
    Item *right = chart[(size_t)k * w + (size_t)j];
    if (!left || !right) continue;
    uint64_t rmask = 0;
    for (Item *r = right; r; r = r->next) {
      right_idx[r->nt] = r;
      rmask |= 1ULL << r->nt;
    }
    for (Item *l = left; l; l = l->next) {
      int b = l->nt;
      for (int q = rules_by_b_start[b]; q < rules_by_b_start[b + 1]; q++) {
        int rk = rules_by_b[q];
        const Rule *ru = &rules[rk];
        if (!(rmask >> ru->c & 1)) continue;
        Item *r = right_idx[ru->c];
        Item *it = by_nt[ru->a];
        if (!it) {
          it = by_nt[ru->a] = new_item(ru->a);
          if (tail) tail->next = it;
          else head = it;
          tail = it;
          (*items)++;
        }
        Deriv *d = (Deriv *)bench_xmalloc(sizeof(Deriv));
        d->left = l;
        d->right = r;
        d->split = k;
        d->rule = rk;
        d->next = it->derivs;
        it->derivs = d;
        it->nderiv++;
        it->trees += l->trees * r->trees;
        (*derivs)++;
      }
    }
  }
  chart[(size_t)i * w + (size_t)j] = head;
}

static void setup_sentence(int s) {
  int n = sent_len[s];
  size_t w = (size_t)n + 1;
  cur_len = n;
  cur_sent = s;
  chart = (Item **)bench_xmalloc(w * w * sizeof(Item *));
  memset(chart, 0, w * w * sizeof(Item *));
  long items = 0;
  for (int i = 0; i < n; i++) {
    uint64_t m = word_nts[sentences[s][i]];
    Item *head = NULL, *tail = NULL;
    for (int a = 0; a < nnt; a++)
      if (m >> a & 1) {
        Item *it = new_item(a);
        it->trees = 1;
        it->nderiv = 1;
        if (tail) tail->next = it;
        else head = it;
        tail = it;
        items++;
      }
    chart[(size_t)i * w + (size_t)i + 1] = head;
  }
  atomic_store(&n_items, items);
  atomic_store(&n_derivs, 0);
}

static int verify_chart(int s) {
  int n = cur_len;
  size_t w = (size_t)n + 1;
  for (int i = 0; i < n; i++)
    for (int j = i + 2; j <= n; j++)
      for (Item *it = chart[(size_t)i * w + (size_t)j]; it; it = it->next) {
        uint64_t t = 0;
        int nd = 0;
        for (Deriv *d = it->derivs; d; d = d->next, nd++) {
          const Rule *ru = &rules[d->rule];
          if (ru->a != it->nt || d->left->nt != ru->b || d->right->nt != ru->c ||
              d->split <= i || d->split >= j) {
            bench_fail("sentence %d cell (%d,%d): derivation does not match its rule", s, i, j);
            return 0;
          }
          int found = 0;
          for (Item *x = chart[(size_t)i * w + (size_t)d->split]; x; x = x->next)
            if (x == d->left) found |= 1;
          for (Item *x = chart[(size_t)d->split * w + (size_t)j]; x; x = x->next)
            if (x == d->right) found |= 2;
          if (found != 3) {
            bench_fail("sentence %d cell (%d,%d): derivation child not in its cell", s, i, j);
            return 0;
          }
          t += d->left->trees * d->right->trees;
        }
        if (t != it->trees || nd != it->nderiv) {
          bench_fail("sentence %d cell (%d,%d) nt %d: tree count mismatch", s, i, j, it->nt);
          return 0;
        }
      }
  return 1;
}

static uint64_t result_hash;
static uint64_t total_trees_xor;

static void finish_sentence(int s) {
  size_t w = (size_t)cur_len + 1;
  long items = atomic_load(&n_items), derivs = atomic_load(&n_derivs);
  uint64_t trees = 0;
  for (Item *it = chart[(size_t)0 * w + (size_t)cur_len]; it; it = it->next)
    if (it->nt == 0) trees = it->trees;
  if (items != ref_items[s] || derivs != ref_derivs[s] || trees != ref_trees[s]) {
    bench_fail("sentence %d: items %ld derivs %ld trees %llu; reference %ld %ld %llu", s, items,
               derivs, (unsigned long long)trees, ref_items[s], ref_derivs[s],
               (unsigned long long)ref_trees[s]);
    fail_flag = 1;
  }
  if (verify_every > 0 && (s % verify_every == 0 || s == nsent - 1))
    if (!verify_chart(s)) fail_flag = 1;
  result_hash = bench_mix(result_hash, (uint64_t)items);
  result_hash = bench_mix(result_hash, (uint64_t)derivs);
  result_hash = bench_mix(result_hash, trees);
  total_trees_xor ^= trees;
  chart = NULL; /* the whole chart becomes garbage */
}

typedef struct {
  int id;
} Worker;

static void *worker(void *arg) {
  int id = ((Worker *)arg)->id;
  for (int s = 0; s < nsent; s++) {
    if (id == 0) setup_sentence(s);
    pthread_barrier_wait(&barrier);
    int n = sent_len[s];
    for (int len = 2; len <= n; len++) {
      long items = 0, derivs = 0;
      int ncells = n - len + 1;
      for (;;) {
        int c = atomic_fetch_add(&next_cell, 1);
        if (c >= ncells) break;
        fill_cell(c, c + len, &items, &derivs);
      }
      atomic_fetch_add(&n_items, items);
      atomic_fetch_add(&n_derivs, derivs);
      /* the serial thread of the barrier resets the cell counter */
      if (pthread_barrier_wait(&barrier) == PTHREAD_BARRIER_SERIAL_THREAD)
        atomic_store(&next_cell, 0);
      pthread_barrier_wait(&barrier);
    }
    if (id == 0) finish_sentence(s);
  }
  return NULL;
}

int main(int argc, char **argv) {
  int opt;
  while ((opt = getopt(argc, argv, "t:n:g:R:V:l:L:v:S:h")) != -1) {
    switch (opt) {
      case 't': nthreads = (int)bench_arg_long("-t", optarg, 1, 4096); break;
      case 'n': nsent = (int)bench_arg_long("-n", optarg, 1, 1 << 20); break;
      case 'g': nnt = (int)bench_arg_long("-g", optarg, 1, MAXNT); break;
      case 'R': rules_per_nt = (int)bench_arg_long("-R", optarg, 1, 1000); break;
      case 'V': vocab = (int)bench_arg_long("-V", optarg, 1, 1 << 20); break;
      case 'l': minlen = (int)bench_arg_long("-l", optarg, 1, 100000); break;
      case 'L': maxlen = (int)bench_arg_long("-L", optarg, 1, 100000); break;
      case 'v': verify_every = (int)bench_arg_long("-v", optarg, 0, 1 << 20); break;
      case 'S': seed = (uint64_t)bench_arg_long("-S", optarg, 0, 1L << 62); break;
      default:
        BENCH_USAGE_EXIT(
            "usage: cky [-t threads] [-n sentences] [-l min_words] [-L max_words]\n"
            "           [-g nonterminals] [-R rules_per_nt] [-V vocabulary] [-v verify_every] [-S seed]\n");
    }
  }
  if (maxlen < minlen) maxlen = minlen;
  GC_INIT();
  bench_marked_init();
  make_grammar();
  ref_items = (long *)calloc((size_t)nsent, sizeof(long));
  ref_derivs = (long *)calloc((size_t)nsent, sizeof(long));
  ref_trees = (uint64_t *)calloc((size_t)nsent, sizeof(uint64_t));
  double tr0 = bench_now();
  long total_ref_derivs = 0, total_ref_items = 0;
  for (int s = 0; s < nsent; s++) {
    reference(s);
    total_ref_derivs += ref_derivs[s];
    total_ref_items += ref_items[s];
  }
  double ref_s = bench_now() - tr0;

  pthread_barrier_init(&barrier, NULL, (unsigned)nthreads);
  Worker *ws = (Worker *)calloc((size_t)nthreads, sizeof(Worker));
  for (int i = 0; i < nthreads; i++) ws[i].id = i;
  double t0 = bench_now();
  if (nthreads == 1) worker(&ws[0]);
  else bench_run_threads(nthreads, worker, ws, sizeof(Worker));
  double wall = bench_now() - t0;

  long allocs = total_ref_items + total_ref_derivs + nsent;
  bench_result_begin("cky", nthreads, wall);
  bench_kv("sentences", "%d", nsent);
  bench_kv("items", "%ld", total_ref_items);
  bench_kv("derivs", "%ld", total_ref_derivs);
  bench_kv("allocs", "%ld", allocs);
  bench_kv("mops", "%.3f", (double)allocs / wall / 1e6);
  bench_kv("ref_s", "%.3f", ref_s);
  bench_kv("start_parses_xor", "%016llx", (unsigned long long)total_trees_xor);
  bench_kv("hash", "%016llx", (unsigned long long)result_hash);
  free(ws);
  return bench_result_end();
}
