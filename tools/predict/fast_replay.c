/* sgc-fast-replay [-c CPUS] [-m MAX] TRACE: the library's fast predictor
 * (src/mark/predict.c) run again over a recorded SGC_TRACE, one
 * collection after another as the run made them, with the profile of
 * SGC_PREDICT_PROFILE: for each record its gc_no, markers, mark_ns, the
 * hindsight prediction the record would now carry (predicted_mark_ns)
 * and the count SGC_MARKERS=auto would now choose for it from the
 * collections before (MAX, default CPUS).  So a change to the fast
 * predictor can be checked against marks measured on a quiet machine
 * (tools/analysis/predict_vs_measured.py --replay).  The trace lacks a
 * collection's pointer-free bytes and static roots: both are taken as 0.
 * CPUS (default 2): the CPUs the traced run could use, for whether its
 * helpers took part (parallel.c's helpers_took_part). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "heap/accounting.h"
#include "mark/mark.h"
#include "mark/predict.h"

/* The number after "KEY": in LINE from FROM on; 0 when absent. */
static unsigned long long field(const char *line, const char *key, const char **after) {
  char pattern[64];
  snprintf(pattern, sizeof pattern, "\"%s\":", key);
  const char *at = strstr(line, pattern);
  if (!at) return 0;
  if (after) *after = at + strlen(pattern);
  return strtoull(at + strlen(pattern), NULL, 10);
}

int main(int argc, char **argv) {
  unsigned cpus = 2, max = 0;
  int opt;
  while ((opt = getopt(argc, argv, "c:m:")) != -1) {
    if (opt == 'c') cpus = (unsigned)atoi(optarg);
    else if (opt == 'm') max = (unsigned)atoi(optarg);
    else {
      fprintf(stderr, "usage: sgc-fast-replay [-c CPUS] [-m MAX] TRACE\n");
      return 2;
    }
  }
  if (optind + 1 != argc) {
    fprintf(stderr, "usage: sgc-fast-replay [-c CPUS] [-m MAX] TRACE\n");
    return 2;
  }
  if (!max) max = cpus;
  FILE *f = fopen(argv[optind], "r");
  if (!f) {
    fprintf(stderr, "sgc-fast-replay: cannot read %s\n", argv[optind]);
    return 1;
  }
  static char line[1 << 16];
  bool first = true;
  printf("gc_no markers mark_ns predicted_ns auto_markers\n");
  while (fgets(line, sizeof line, f)) {
    if (!strstr(line, "\"gc_no\":")) continue;
    if (first) heap_accounting.allocated_since_gc = field(line, "allocated_bytes", NULL);
    first = false;
    atomic_fetch_add(&heap_accounting.gc_count, 1);
    unsigned choice = predict_markers(max);
    struct mark_totals t = {.bytes = field(line, "marked_bytes", NULL),
                            .objects = field(line, "marked_objects", NULL),
                            .idle_ns = field(line, "mark_idle_ns", NULL),
                            .max_busy_ns = field(line, "mark_busy_max_ns", NULL),
                            .min_busy_ns = field(line, "mark_busy_min_ns", NULL),
                            .markers = (unsigned)field(line, "markers", NULL)};
    /* The markers' own figures: busy times summed, the helpers' CPU time. */
    const char *at = strstr(line, "\"mark_threads\":");
    uint64_t helpers_cpu = 0, collector = 0;
    for (unsigned k = 0; at && k < t.markers; k++) {
      uint64_t busy = field(at, "busy_ns", &at);
      uint64_t idle = field(at, "idle_ns", &at);
      uint64_t cpu = field(at, "cpu_ns", &at);
      t.sum_busy_ns += busy;
      if (k == 0) collector = busy + idle;
      else helpers_cpu += cpu;
    }
    unsigned room = cpus > 1 ? cpus - 1 : 1;
    if (t.markers > 1 && room > t.markers - 1) room = t.markers - 1;
    bool learnt = t.markers > 1 && 2 * helpers_cpu >= (uint64_t)room * collector;
    predict_after_collection(&t, learnt);
    printf("%llu %u %llu %llu %u\n", field(line, "gc_no", NULL), t.markers,
           field(line, "mark_ns", NULL), (unsigned long long)predict_last_ns(), choice);
  }
  fclose(f);
  return 0;
}
