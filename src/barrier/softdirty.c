#include "barrier/backend.h"
static bool softdirty_probe(void) { barrier_probe_refused(BARRIER_FULL, "todo"); return false; }
const struct barrier_ops barrier_softdirty_ops = {.probe = softdirty_probe};
