/* The data TLB for the slow predictor: a simulation of two levels (4 KiB
 * pages, as sgc's heap and page headers have) and the fit of its
 * figures to sgc-calibrate's chases (docs/prediction.md, "Page walks"). */
#ifndef SGC_PREDICT_TLB_H
#define SGC_PREDICT_TLB_H

#include <stdbool.h>

#include "graph.h"

enum { TLB_PAGE_BYTES = 4096 };

struct tlb_sim {
  struct cache_sim level[2]; /* the first level, then the second; tags NULL: none */
  double cost[2];            /* a miss of that level that the next one serves */
  double misses[2];
};
/* From PROF's tlb1_* and tlb2_* keys; false only when out of memory.  A
 * level of 0 entries is not simulated. */
bool tlb_init(struct tlb_sim *t, const struct predict_profile *prof);
/* What ADDRESS's translation costs beyond a hit of the first level. */
double tlb_access(struct tlb_sim *t, uint64_t address);
void tlb_free(struct tlb_sim *t);

/* The TLB's figures from chases over N[k] pages, one cached line a page,
 * each costing EXTRA_NS[k] more per access than the same lines side by
 * side (K = 0..COUNT-1, N ascending): the entries of each level among
 * the N, and their costs, by least squares (of relative errors) on the
 * extra time of a random page under LRU, c1 (1 - e1/N)+ + c2 (1 - e2/N)+. */
struct tlb_fit {
  unsigned entries[2];
  double cost[2];
  double residual; /* the fit's sum of squares */
};
bool tlb_fit(const unsigned *n, const double *extra_ns, unsigned count, struct tlb_fit *out);

#endif
