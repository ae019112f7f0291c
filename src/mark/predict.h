/* The fast predictor (thesis §4.4.2) and SGC_MARKERS=auto's choice of
 * markers (§4.4.4, Table 4.4); the model is mark/predict_model.c. */
#ifndef SGC_PREDICT_H
#define SGC_PREDICT_H

#include <stdbool.h>
#include <stdint.h>

#include "mark/mark.h"
#include "mark/predict_model.h"

/* The markers, 1 to MAX, the coming collection uses under
 * SGC_MARKERS=auto: the fewest whose predicted mark time is within
 * PREDICT_SLACK of the best. */
unsigned predict_markers(unsigned max);
/* After a collection's mark: T, its totals; LEARNT, whether its helpers
 * ran enough for its parallelism to tell the heap's width. */
void predict_after_collection(const struct mark_totals *t, bool learnt);
/* For the trace: the fast prediction of the last collection's mark time
 * with the markers it used, from its own live figures; the count
 * SGC_MARKERS=auto chose for it (0: not auto). */
uint64_t predict_last_ns(void);
unsigned predict_last_choice(void);

/* The fast predictor's inputs from a mark's figures (exposed for tests):
 * live BYTES of which ATOMIC pointer-free, OBJECTS, ROOT_BYTES scanned
 * as roots, and WIDTH, the parallelism the heap allows (0: unknown, as
 * wide as the markers). */
void predict_fast_input(const struct predict_profile *prof, uint64_t bytes, uint64_t atomic,
                        uint64_t objects, uint64_t root_bytes, double width,
                        struct predict_input *in);
/* The profile in use: SGC_PREDICT_PROFILE's file, else the defaults. */
const struct predict_profile *predict_profile(void);

#endif
