/* The bounds of thesis §2.3, checked by replaying page-usage traces
 * through the decision code the allocator runs (alloc/page_policy.h):
 * a_lps <= k * a_ps (rounded up to a whole page) and a_lps <= a_al, for
 * the adversarial program B of Fig 2.1, program A, and random traces.
 * Pages are released explicitly, so l = u (the thesis's rule for that
 * case). */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "alloc/page_policy.h"
#include "unit.h"

enum { MAX_THREADS = 16 };

struct sim {
  struct page_policy_view v;
  long u[MAX_THREADS], max_u[MAX_THREADS], d[MAX_THREADS];
  long shared_free; /* PS */
  long u_total, max_u_total;
  int threads;
};

static void sim_init(struct sim *s, enum page_policy p, double k, int threads) {
  memset(s, 0, sizeof *s);
  s->v.policy = p;
  s->v.k = k;
  s->threads = threads;
}

static void take(struct sim *s, int i) {
  long others = 0;
  for (int j = 0; j < s->threads; j++)
    if (j != i) others += s->d[j];
  bool own = s->v.policy == PAGE_POLICY_PS ? s->shared_free > 0 : s->d[i] > 0;
  switch (page_policy_choose(&s->v, own, s->v.policy == PAGE_POLICY_PS ? false : others > 0)) {
  case PAGE_FROM_SHARED: s->shared_free--; break;
  case PAGE_FROM_OWN: s->d[i]--; break;
  case PAGE_FROM_STEAL:
    for (int j = 0; j < s->threads; j++)
      if (j != i && s->d[j] > 0) {
        s->d[j]--;
        break;
      }
    break;
  case PAGE_FROM_FRESH: s->v.a++; break;
  }
  s->u[i]++;
  s->u_total++;
  if (s->u[i] > s->max_u[i]) {
    s->v.sum_max_u += s->u[i] - s->max_u[i];
    s->max_u[i] = s->u[i];
  }
  if (s->u_total > s->max_u_total) s->max_u_total = s->u_total;
  if (s->u_total > s->v.max_l) s->v.max_l = s->u_total; /* l = u */
}

static void release(struct sim *s, int i) {
  if (s->u[i] == 0) return;
  s->u[i]--;
  s->u_total--;
  if (page_policy_returns_to_owner(s->v.policy)) s->d[i]++;
  else s->shared_free++;
}

/* A trace: thread, +1 (take a page) or -1 (release one). */
struct event {
  int thread, delta;
};

static void replay(struct sim *s, const struct event *ev, size_t n) {
  for (size_t e = 0; e < n; e++) {
    if (ev[e].delta > 0) take(s, ev[e].thread);
    else release(s, ev[e].thread);
  }
}

static void check_bounds(const char *name, const struct event *ev, size_t n, int threads) {
  struct sim ps, al;
  sim_init(&ps, PAGE_POLICY_PS, 1, threads);
  sim_init(&al, PAGE_POLICY_AL, 1, threads);
  replay(&ps, ev, n);
  replay(&al, ev, n);
  CHECK(ps.v.a == ps.max_u_total, "%s: PS consumed %ld pages, max u is %ld", name, ps.v.a,
        ps.max_u_total);
  double ks[] = {1.0, 1.25, 1.5, 2.0, 3.0, (double)threads};
  for (size_t i = 0; i < sizeof ks / sizeof ks[0]; i++) {
    struct sim lps;
    sim_init(&lps, PAGE_POLICY_LPS, ks[i], threads);
    replay(&lps, ev, n);
    long bound = (long)ceil(ks[i] * (double)ps.v.a);
    CHECK(lps.v.a <= bound, "%s: LPS(%.2f) consumed %ld > k * a_ps = %ld", name, ks[i], lps.v.a,
          bound);
    CHECK(lps.v.a <= al.v.a, "%s: LPS(%.2f) consumed %ld > a_al = %ld", name, ks[i], lps.v.a,
          al.v.a);
  }
}

static uint64_t rng = 88172645463325252ull;

int main(void) {
  enum { M = 1280 }; /* about 5 MB of 4 KiB pages, as the thesis's unfair benchmark */
  static struct event ev[1 << 20];
  size_t n = 0;

  /* Program B (Fig 2.1): threads take turns using M pages each. */
  for (int turn = 0; turn < 8; turn++) {
    int t = turn % 4;
    for (int p = 0; p < M; p++) ev[n++] = (struct event){t, +1};
    for (int p = 0; p < M; p++) ev[n++] = (struct event){t, -1};
  }
  check_bounds("program B", ev, n, 4);
  {
    struct sim ps, al, lps1;
    sim_init(&ps, PAGE_POLICY_PS, 1, 4);
    sim_init(&al, PAGE_POLICY_AL, 1, 4);
    sim_init(&lps1, PAGE_POLICY_LPS, 1, 4);
    replay(&ps, ev, n);
    replay(&al, ev, n);
    replay(&lps1, ev, n);
    /* The point of Fig 2.1: AL takes P times what PS takes; LPS(1) as PS. */
    CHECK(ps.v.a == M, "program B: PS consumed %ld, expected %d", ps.v.a, M);
    CHECK(al.v.a == 4 * M, "program B: AL consumed %ld, expected %d", al.v.a, 4 * M);
    CHECK(lps1.v.a == M, "program B: LPS(1) consumed %ld, expected %d", lps1.v.a, M);
  }

  /* Program A: all threads grow and shrink together. */
  n = 0;
  for (int round = 0; round < 6; round++) {
    for (int p = 0; p < 300; p++)
      for (int t = 0; t < 4; t++) ev[n++] = (struct event){t, +1};
    for (int p = 0; p < 300; p++)
      for (int t = 0; t < 4; t++) ev[n++] = (struct event){t, -1};
  }
  check_bounds("program A", ev, n, 4);

  /* Random traces, 2 to 16 threads, biased walks so usage moves around. */
  for (int trial = 0; trial < 200; trial++) {
    int threads = 2 + (int)(unit_xorshift(&rng) % 15);
    n = 0;
    long held[MAX_THREADS] = {0};
    size_t len = 2000 + unit_xorshift(&rng) % 20000;
    for (size_t e = 0; e < len; e++) {
      int t = (int)(unit_xorshift(&rng) % (uint64_t)threads);
      bool grow = (unit_xorshift(&rng) % 100) < (uint64_t)(held[t] < 50 ? 70 : 35);
      if (!grow && held[t] == 0) grow = true;
      ev[n++] = (struct event){t, grow ? +1 : -1};
      held[t] += grow ? 1 : -1;
    }
    check_bounds("random trace", ev, n, threads);
  }
  return unit_finish();
}
