/* The fast predictor (thesis §4.4.2): the model of predict_model.c fed
 * with a mark's totals instead of a snapshot's simulation.  T_1 from the
 * objects and words marked, Q_1 as every live line missing once (the
 * thesis's fast version also underestimates misses), T_inf from the
 * heap's width, which the last multi-marker collection's parallelism
 * (busy time summed over the busiest marker's) tells, and all of it
 * scaled by what this machine's marks took against their predictions. */
#include "mark/predict.h"

#include <fcntl.h>
#include <unistd.h>

#include "base/env.h"
#include "common.h"
#include "heap/accounting.h"

enum {
  /* Lines a steal makes miss again (L, §4.3.6): about the prefetch
   * window's worth, as the fast version tracks no lines. */
  FAST_LIVE_LINES = 16,
  RETRY_MIN = 8,
  RETRY_MAX = 256,
  /* Marks in a row with several markers whose helpers got no CPU for
   * them: the markers bought nothing, so the next ones mark alone (as a
   * narrow heap's, retried as it is). */
  UNHELPED_MAX = 2,
};
/* Table 4.4: the fewest markers within 5% of the best predicted time. */
#define PREDICT_SLACK 0.05
/* A mark whose parallelism stayed under this share of its markers was
 * limited by the heap's width, not by the markers. */
#define NARROW_SHARE 0.7
/* The scale's bounds, and the weight of each mark in it. */
#define SCALE_MIN (1.0 / 64)
#define SCALE_MAX 64.0
#define SCALE_WEIGHT 0.25
/* A sample past this factor of the scale counts as this factor: busy
 * times are wall times, and a mark whose thread was preempted must not
 * move the scale far. */
#define SCALE_STEP 2.0

static struct predict_profile profile;
static bool profile_ready;
static struct {
  bool known; /* a collection's figures */
  uint64_t bytes, atomic, objects;
  double width;  /* 0: unknown (wide) */
  unsigned alone, retry; /* collections marked alone since it was learnt */
  unsigned unhelped;     /* marks in a row whose helpers did not take part */
  uint64_t chosen_for;   /* gc_count + 1 the cached choice is for */
  unsigned chosen, chosen_max;
  unsigned last_choice;
  uint64_t last_ns;
  /* Marks measured here over the profile's predictions for them, smoothed:
   * it scales the profile's work and miss costs to this machine as it
   * runs, so that an uncalibrated profile still weighs work against the
   * fixed costs of more markers in the right proportion. */
  double scale;
  unsigned samples;
} state = {.retry = RETRY_MIN, .scale = 1};

/* The pre-wake's rule as this process runs it (parallel_prewake): markers
 * up to its usable CPUs are pre-woken, unless SGC_PREWAKE_US=0. */
static void match_prewake(void) {
  if (sgc_settings.usable_cpus) profile.cpus = sgc_settings.usable_cpus;
  if (!sgc_settings.prewake_ns) profile.prewake_join_ns = profile.join_ns;
}

static void load_profile(void) {
  profile_ready = true;
  predict_profile_default(&profile);
  const char *path = env_value("SGC_PREDICT_PROFILE");
  if (!path) {
    match_prewake();
    return;
  }
  /* Static: this runs at the first collection, on whatever thread starts
   * it, whose stack may be PTHREAD_STACK_MIN (bb_tiny_stacks); once only. */
  static char text[8192];
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  ssize_t n = fd >= 0 ? read(fd, text, sizeof text - 1) : -1;
  if (fd >= 0) close(fd);
  if (n < 0) {
    sgc_warn("ignoring SGC_PREDICT_PROFILE=%s: cannot read it", path);
    match_prewake(); /* the built-in profile, as without the setting */
    return;
  }
  text[n] = 0;
  char error[160];
  struct predict_profile p = profile;
  if (predict_profile_parse(text, &p, error, sizeof error)) profile = p;
  else sgc_warn("ignoring SGC_PREDICT_PROFILE=%s: %s", path, error);
  match_prewake();
}

const struct predict_profile *predict_profile(void) {
  if (!profile_ready) load_profile();
  return &profile;
}

/* What a miss costs the marker, the slow predictor's overlap in
 * aggregate (docs/prediction.md, "The fast predictor"): each scanned
 * object's first line and each mark-byte line miss with the prefetch
 * window's other fetches outstanding, latency / min(16, MLP); an
 * object's further lines stream, less what scanning the line before
 * covers.  Not the heap's width: a narrow heap's
 * window holds nothing to overlap, but a chain lies in the order it was
 * allocated, which the hardware's stream prefetcher fetches ahead at
 * about that cost a line (charged the latency whole, a list was
 * predicted at 10 times its mark; history.md).  0 without an overlap
 * measurement (the thesis's profiles): predict_at then charges
 * marker_miss_ns or the latency, as before. */
static double fast_miss_ns(const struct predict_profile *prof, double first_lines,
                           double scanned_lines, double mark_lines) {
  double misses = scanned_lines + mark_lines;
  if (!(prof->read_overlap_ns > 0) || !(misses > 0)) return 0;
  unsigned n = prof->nodes ? prof->nodes : 1;
  double latency = (prof->read_miss_ns + (n - 1) * prof->read_remote_miss_ns) / n;
  double mlp = prof->read_miss_ns > prof->read_overlap_ns ? prof->read_miss_ns / prof->read_overlap_ns : 1;
  double in_flight = mlp > PREDICT_PREFETCH_DEPTH ? PREDICT_PREFETCH_DEPTH : mlp;
  /* Streams slow down from afar as the latency does.  The prefetcher
   * fetches an object's next line while the marker scans the line before
   * (line / 8 words): only the rest of the stream's time is waited for
   * (tools/predict/graph.c's streams alike); without a stream time, no
   * prefetcher and the latency whole. */
  double stream = prof->read_stream_ns > 0 ? prof->read_stream_ns : prof->read_miss_ns;
  if (prof->read_miss_ns > 0) stream *= latency / prof->read_miss_ns;
  double line = prof->line_bytes ? prof->line_bytes : 64, covered = line / 8 * prof->word_ns;
  if (prof->read_stream_ns > 0) stream = stream > covered ? stream - covered : 0;
  return ((first_lines + mark_lines) * latency / in_flight + (scanned_lines - first_lines) * stream) /
         misses;
}

void predict_fast_input(const struct predict_profile *prof, uint64_t bytes, uint64_t atomic,
                        uint64_t objects, uint64_t root_bytes, double width,
                        struct predict_input *in) {
  *in = (struct predict_input){0};
  double scanned = (double)(bytes > atomic ? bytes - atomic : 0);
  double line = prof->line_bytes ? prof->line_bytes : 64;
  in->t1_ns = (double)objects * prof->object_ns + (scanned + (double)root_bytes) / 8 * prof->word_ns;
  in->tinf_ns = width > 0 ? in->t1_ns / width : 0;
  /* Each scanned line once, and the mark bytes' lines (one byte per 16). */
  double scanned_lines = scanned / line, mark_lines = (double)bytes / 16 / line;
  in->misses = scanned_lines + mark_lines;
  in->live_lines = FAST_LIVE_LINES;
  /* The scanned objects, by their share of the bytes (the totals do not
   * count them apart), each at least its first line. */
  double first = bytes ? (double)objects * scanned / (double)bytes : 0;
  in->miss_ns = fast_miss_ns(prof, first < scanned_lines ? first : scanned_lines, scanned_lines,
                             mark_lines);
}

static void current_input(struct predict_input *in) {
  uint64_t bytes = state.bytes, atomic = state.atomic, objects = state.objects;
  if (!state.known) {
    /* Before the first collection: what was allocated bounds the live data. */
    bytes = heap_accounting.allocated_since_gc;
    atomic = 0;
    objects = bytes / 32;
  }
  predict_fast_input(predict_profile(), bytes, atomic, objects, heap_accounting.root_bytes,
                     state.width, in);
  in->t1_ns *= state.scale;
  in->tinf_ns *= state.scale;
  in->misses *= state.scale;
}

unsigned predict_markers(unsigned max) {
  /* One GC thread at most (SGC_MARKERS=1, a single CPU): nothing to choose. */
  if (max <= 1) return state.last_choice = 1;
  uint64_t coming = atomic_load_explicit(&heap_accounting.gc_count, memory_order_relaxed) + 1;
  /* The pre-wake and the mark ask for the same collection: one answer. */
  if (state.chosen_for != coming || state.chosen_max != max) {
    struct predict_input in;
    current_input(&in);
    state.chosen = predict_choose(predict_profile(), &in, max, PREDICT_SLACK, NULL);
    state.chosen_for = coming;
    state.chosen_max = max;
  }
  state.last_choice = state.chosen;
  return state.chosen;
}

/* What mark T's parallelism says of the heap's width, for the next
 * collections (LEARNT: its helpers ran). */
static void learn_width(const struct mark_totals *t, bool learnt) {
  /* Helpers that got no CPU, mark after mark (a machine busy with other
   * work), teach no width and no scale: kept on, they would be kept for
   * good, and nothing learnt. */
  if (t->markers > 1 && !learnt) {
    if (++state.unhelped >= UNHELPED_MAX) {
      state.width = 1;
      state.alone = 0;
      state.unhelped = 0;
    }
    return;
  }
  if (t->markers > 1) {
    state.unhelped = 0;
    double achieved = t->max_busy_ns ? (double)t->sum_busy_ns / (double)t->max_busy_ns : 1.0;
    if (achieved < NARROW_SHARE * t->markers) {
      state.width = achieved > 1 ? achieved : 1;
    } else {
      state.width = 0; /* as wide as the markers at least */
      state.retry = RETRY_MIN;
    }
    state.alone = 0;
  } else if (state.width > 0 && ++state.alone >= state.retry) {
    /* Marked alone for a while: the heap's shape may have changed, so
     * the next collection tries the markers the profile alone gives. */
    state.width = 0;
    state.alone = 0;
    state.retry = state.retry * 2 > RETRY_MAX ? RETRY_MAX : state.retry * 2;
  }
}

void predict_after_collection(const struct mark_totals *t, bool learnt) {
  state.known = true;
  state.bytes = t->bytes;
  state.atomic = t->atomic_bytes;
  state.objects = t->objects;
  /* Only auto's choices are recorded (SGC_MARKERS_CYCLE takes precedence). */
  if (sgc_settings.markers_choice != MARKERS_AUTO || sgc_settings.markers_cycle_length)
    state.last_choice = 0;
  /* The width first: the prediction of this mark, and the scale it
   * teaches, take the width the mark itself showed.  With the width it
   * was chosen under (unknown: wide), a list's first mark with 2 markers
   * was predicted at half its time and the scale doubled for it. */
  learn_width(t, learnt);
  struct predict_input in;
  current_input(&in);
  struct predict_point pt;
  predict_at(predict_profile(), &in, t->markers ? t->markers : 1, 0, &pt);
  state.last_ns = (uint64_t)pt.time_ns;
  /* The mark's own time: its busiest marker's busy time, or the markers'
   * mean time in the drain (busy and idle: stealing, termination) where
   * that is longer.  Not the busiest's plus a share of all idle time: a
   * list's helper idles through the whole mark, which that counted half
   * again.  Only from marks whose helpers ran: the others measured the
   * machine's other work. */
  double mean = t->markers ? (double)(t->sum_busy_ns + t->idle_ns) / t->markers : 0;
  double measured = (double)t->max_busy_ns > mean ? (double)t->max_busy_ns : mean;
  if ((t->markers <= 1 || learnt) && measured > 0 && pt.time_ns > 0) {
    double sample = state.scale * measured / pt.time_ns;
    if (state.samples) {
      double lo = state.scale / SCALE_STEP, hi = state.scale * SCALE_STEP;
      sample = sample < lo ? lo : sample > hi ? hi : sample;
    }
    sample = sample < SCALE_MIN ? SCALE_MIN : sample > SCALE_MAX ? SCALE_MAX : sample;
    state.scale = state.samples++ ? (1 - SCALE_WEIGHT) * state.scale + SCALE_WEIGHT * sample : sample;
  }
}

uint64_t predict_last_ns(void) { return state.last_ns; }
unsigned predict_last_choice(void) { return state.last_choice; }
