#include "barrier/backend.h"
static bool manual_probe(void) { barrier_probe_refused(BARRIER_FULL, "todo"); return false; }
const struct barrier_ops barrier_manual_ops = {.probe = manual_probe};
void barrier_note_store(const void *p) { (void)p; }
