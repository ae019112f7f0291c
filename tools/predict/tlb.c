/* The data TLB: two levels of pages, and their figures fitted to
 * sgc-calibrate's chases (tlb.h). */
#include "tlb.h"

#include <string.h>

/* The first level is fully associative up to this many entries (as the
 * L1 data TLBs of current x86 are), the second has this many ways. */
enum { FULL_WAYS = 64, SECOND_WAYS = 8 };

bool tlb_init(struct tlb_sim *t, const struct predict_profile *prof) {
  memset(t, 0, sizeof *t);
  unsigned entries[2] = {prof->tlb1_entries, prof->tlb2_entries};
  double cost[2] = {prof->tlb1_miss_ns, prof->tlb2_miss_ns};
  for (int k = 0; k < 2; k++) {
    if (!entries[k]) continue;
    unsigned most = k ? SECOND_WAYS : FULL_WAYS;
    unsigned ways = entries[k] < most ? entries[k] : most;
    if (!cache_init(&t->level[k], (uint64_t)entries[k] / ways * ways * TLB_PAGE_BYTES, ways,
                    TLB_PAGE_BYTES)) {
      tlb_free(t);
      return false;
    }
    t->cost[k] = cost[k];
  }
  return true;
}

double tlb_access(struct tlb_sim *t, uint64_t address) {
  double ns = 0;
  for (int k = 0; k < 2; k++) {
    if (!t->level[k].tags) continue;
    if (!cache_access(&t->level[k], address)) break; /* this level holds it */
    t->misses[k]++;
    ns += t->cost[k];
  }
  return ns;
}

void tlb_free(struct tlb_sim *t) {
  for (int k = 0; k < 2; k++)
    if (t->level[k].tags) cache_free(&t->level[k]);
}

/* The extra time a level of E entries adds, as a share of its cost, to
 * a random page of N under LRU: the share of accesses it misses. */
static double missed(unsigned e, unsigned n) { return e && n > e ? 1 - (double)e / n : 0; }

/* Each chase weighs by its relative error: the first level's misses
 * cost a few ns, walks past the second tens or hundreds, and both must
 * fit. */
static double weight(double y) { return 1 / ((y > 0 ? y : 0) + 0.5) / ((y > 0 ? y : 0) + 0.5); }

static double residual(const unsigned *n, const double *y, unsigned count, unsigned e1, unsigned e2,
                       const double cost[2]) {
  double sum = 0;
  for (unsigned k = 0; k < count; k++) {
    double r = cost[0] * missed(e1, n[k]) + cost[1] * missed(e2, n[k]) - y[k];
    sum += weight(y[k]) * r * r;
  }
  return sum;
}

/* The least-squares costs (both >= 0) for entries E1 < E2 (0: that level
 * left out); the residual. */
static double fit_costs(const unsigned *n, const double *y, unsigned count, unsigned e1, unsigned e2,
                        double cost[2]) {
  double a[2][2] = {{0}}, b[2] = {0};
  cost[0] = cost[1] = 0;
  for (unsigned k = 0; k < count; k++) {
    double x[2] = {missed(e1, n[k]), missed(e2, n[k])}, w = weight(y[k]);
    for (int i = 0; i < 2; i++) {
      b[i] += w * x[i] * y[k];
      for (int j = 0; j < 2; j++) a[i][j] += w * x[i] * x[j];
    }
  }
  /* Each level alone, then both together where that solves with costs >= 0. */
  double best = -1;
  for (int keep = 0; keep < 2; keep++) {
    double c[2] = {0, 0};
    if (a[keep][keep] > 0 && b[keep] > 0) c[keep] = b[keep] / a[keep][keep];
    double r = residual(n, y, count, e1, e2, c);
    if (best < 0 || r < best) {
      best = r;
      cost[0] = c[0];
      cost[1] = c[1];
    }
  }
  double det = a[0][0] * a[1][1] - a[0][1] * a[1][0];
  if (det > 1e-9 * a[0][0] * a[1][1] && det > 0) {
    double c[2] = {(b[0] * a[1][1] - b[1] * a[0][1]) / det, (a[0][0] * b[1] - a[1][0] * b[0]) / det};
    double r = c[0] >= 0 && c[1] >= 0 ? residual(n, y, count, e1, e2, c) : best;
    if (r < best) {
      best = r;
      cost[0] = c[0];
      cost[1] = c[1];
    }
  }
  return best;
}

bool tlb_fit(const unsigned *n, const double *extra_ns, unsigned count, struct tlb_fit *out) {
  memset(out, 0, sizeof *out);
  if (count < 2) return false;
  bool found = false;
  /* Each level's entries among the page counts chased (a level past the
   * last count cannot be seen). */
  for (unsigned i = 0; i < count; i++)
    for (unsigned j = i + 1; j <= count; j++) {
      unsigned e1 = n[i], e2 = j < count ? n[j] : 0;
      double cost[2];
      double r = fit_costs(n, extra_ns, count, e1, e2, cost);
      if (!found || r < out->residual - 1e-12) {
        found = true;
        out->residual = r;
        out->entries[0] = cost[0] > 0 ? e1 : 0;
        out->entries[1] = cost[1] > 0 ? e2 : 0;
        out->cost[0] = cost[0];
        out->cost[1] = cost[1];
      }
    }
  if (!out->entries[0] && out->entries[1]) { /* one level: the first */
    out->entries[0] = out->entries[1];
    out->cost[0] = out->cost[1];
    out->entries[1] = 0;
    out->cost[1] = 0;
  }
  return found;
}
