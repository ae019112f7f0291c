#include "barrier/backend.h"
static bool mprotect_probe(void) { barrier_probe_refused(BARRIER_FULL, "todo"); return false; }
const struct barrier_ops barrier_mprotect_ops = {.probe = mprotect_probe};
