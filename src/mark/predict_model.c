/* The thesis's prediction model (§4.3): T_P^M = T_P + Q_P M_P / P. */
#include "mark/predict_model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const predict_term_names[TERM_COUNT] = {
    "work", "critical path", "joining", "steals", "misses", "extra misses", "contention"};

double predict_ln(double x) {
  if (!(x > 1e-300)) return -690.8;
  uint64_t bits;
  memcpy(&bits, &x, sizeof bits);
  int exponent = (int)((bits >> 52) & 0x7ff) - 1023;
  bits = (bits & ~((uint64_t)0x7ff << 52)) | ((uint64_t)1023 << 52);
  double m;
  memcpy(&m, &bits, sizeof m); /* x = m 2^exponent, m in [1, 2) */
  /* ln m = 2 atanh(z), z = (m - 1) / (m + 1) <= 1/3: the series converges fast. */
  double z = (m - 1) / (m + 1), z2 = z * z, term = z, sum = 0;
  for (int k = 1; k < 60 && term != 0; k += 2) {
    sum += term / k;
    term *= z2;
    if (term < 1e-18 && term > -1e-18) break; /* past double precision */
  }
  return 2 * sum + exponent * 0.69314718055994530942;
}

/* g(T) = BASE + (Q/P)(M1 + sum_j V_j SO K rho_j/(1-rho_j)) - T, and g'(T).
 * K = (P-1)/P: a miss queues behind the other markers' requests only
 * (MVA's arrival theorem, their queue by Schweitzer's estimate).  Its
 * own marker's misses in flight queue inside M1 already: the latency,
 * overlap and stream costs were measured with one thread's misses. */
static double contention_gap(double t, double base, double q, double p, double m1, double so,
                             unsigned nodes, const double *share, double *slope) {
  double wait = 0, dwait = 0, others = (p - 1) / p; /* p > 1 here */
  for (unsigned j = 0; j < nodes; j++) {
    double c = so * share[j] * q; /* rho_j = c / T */
    if (c <= 0) continue;
    wait += others * share[j] * so * c / (t - c); /* rho/(1-rho) = c/(T-c) */
    dwait -= others * share[j] * so * c / ((t - c) * (t - c));
  }
  *slope = q / p * dwait - 1;
  return base + q / p * (m1 + wait) - t;
}

double predict_solve_contention(double base, double q, double p, double m1, double so,
                                unsigned nodes, const double *share) {
  double free_ns = base + q * m1 / p;
  if (so <= 0 || q <= 0 || nodes == 0 || p <= 1) return free_ns;
  double saturated = 0; /* T must exceed SO V_j Q at every node (rho < 1) */
  for (unsigned j = 0; j < nodes; j++)
    if (so * share[j] * q > saturated) saturated = so * share[j] * q;
  /* g falls from +inf just above SATURATED; it is >= 0 at FREE_NS. */
  double lo = free_ns > saturated ? free_ns : saturated, hi = lo * 2 + 1, slope;
  while (contention_gap(hi, base, q, p, m1, so, nodes, share, &slope) > 0) hi *= 2;
  double t = hi;
  for (int i = 0; i < 200 && hi - lo > 1e-12 * hi; i++) {
    double g = contention_gap(t, base, q, p, m1, so, nodes, share, &slope);
    if (g > 0) lo = t;
    else hi = t;
    double next = t - g / slope; /* Newton; bisection when it leaves the bracket */
    /* Newton closes in from one side, leaving the bracket wide: its step
     * says when it is done. */
    if (next > lo && next < hi && (next - t) * (next - t) < 1e-24 * t * t) return next;
    t = next > lo && next < hi ? next : lo + (hi - lo) / 2;
  }
  return t;
}

uint64_t predict_lone_split(uint64_t split) {
  return split && split < PREDICT_LONE_SPLIT_BYTES ? PREDICT_LONE_SPLIT_BYTES : split;
}

double predict_extra_misses(const struct predict_input *in, double cuts, double caches) {
  if (in->extra_misses) return in->extra_misses(in->lines, cuts, caches);
  return cuts * in->live_lines;
}

void predict_at(const struct predict_profile *prof, const struct predict_input *in, unsigned p,
                unsigned flags, struct predict_point *out) {
  if (p < 1) p = 1;
  memset(out, 0, sizeof *out);
  out->p = p;
  unsigned n = prof->nodes ? prof->nodes : 1;
  double f = in->rmw_share;
  double read_m1 = (prof->read_miss_ns + (n - 1) * prof->read_remote_miss_ns) / n;
  double rmw_m1 = (prof->rmw_miss_ns + (n - 1) * prof->rmw_remote_miss_ns) / n;
  if (prof->marker_miss_ns > 0) read_m1 = prof->marker_miss_ns;
  double m1 = in->miss_ns > 0 ? in->miss_ns : (1 - f) * read_m1 + f * rmw_m1;
  double so = (1 - f) * prof->read_occupancy_ns + f * prof->rmw_occupancy_ns;
  double q1 = in->misses;
  /* The misses are shared by the markers the graph's width lets work at
   * once, not by all P: a list's misses lie on its critical path (the
   * thesis divides by P, §4.3.1, and so would predict a list's misses
   * away). */
  double width = in->tinf_ns > 0 ? in->t1_ns / in->tinf_ns : p;
  double shared = p < width ? p : width > 1 ? width : 1;

  /* One marker drains with longer pieces (fewer pushes and pops) than
   * markers that share. */
  double t1 = p == 1 && in->t1_lone_ns > 0 ? in->t1_lone_ns : in->t1_ns, work = t1 / p;
  /* Helpers join JOIN late: the collector marks alone meanwhile, its
   * work and its misses alike, a share ALONE of the serial mark (all of
   * it when the mark is over before they come: a tiny heap).  Up to a
   * marker per CPU the collector pre-wakes them, and they join sooner. */
  double join = p <= prof->cpus ? prof->prewake_join_ns : prof->join_ns;
  if (p > 1 && p <= prof->cpus && in->wake_known) {
    /* The helpers on idle CPUs wake as late as such a CPU does, less the
     * time the collector took to reach its mark; the share of them is
     * what the joins average over. */
    double idle_join = prof->join_ns - in->lead_ns;
    if (idle_join < prof->prewake_join_ns) idle_join = prof->prewake_join_ns;
    double helpers = p - 1, idle = in->idle_cpus < helpers ? in->idle_cpus : helpers;
    join = (idle * idle_join + (helpers - idle) * prof->prewake_join_ns) / helpers;
  }
  double serial_ns = t1 + q1 * m1;
  double alone = p > 1 && serial_ns > 0 ? (join < serial_ns ? join : serial_ns) / serial_ns : 0;
  double late = (1 - 1.0 / p) * t1 * alone;
  double late_misses = (1 - 1.0 / shared) * q1 * m1 * alone;
  double serial = (p - 1) * prof->marker_ns;
  /* N_S = P log T_1 (§4.3.4), over the part of the mark the helpers are
   * there for, and none where nothing is ever public to steal: a heap
   * narrower than 2 (a list) keeps a share width - 1 of them. */
  double stealable = width < 2 ? (width > 1 ? width - 1 : 0) : 1;
  out->steals = p > 1 ? p * predict_ln(t1 > 3 ? t1 : 3) * (1 - alone) * stealable : 0;
  double steals_ns = out->steals * prof->steal_ns / p;
  double spread = work + late;
  double critical = in->tinf_ns > spread ? in->tinf_ns - spread : 0;
  out->tp_ns = spread + critical + serial + steals_ns + late_misses;

  double share[PREDICT_MAX_NODES];
  unsigned nodes;
  if (prof->interleave || in->nodes == 0) {
    nodes = prof->interleave ? (n < PREDICT_MAX_NODES ? n : PREDICT_MAX_NODES) : 1;
    for (unsigned j = 0; j < nodes; j++) share[j] = 1.0 / nodes;
  } else {
    nodes = in->nodes < PREDICT_MAX_NODES ? in->nodes : PREDICT_MAX_NODES;
    memcpy(share, in->node_share, nodes * sizeof *share);
  }
  /* Q_P = Q_1 + N_S L (§4.3.6), L only for a thief that does not share
   * the victim's cache: with CACHE_CPUS markers to a cache, a share of
   * (sharing - 1)/(P - 1) of the victims is its own cache's. */
  unsigned sharing = prof->cache_cpus > 1 ? (prof->cache_cpus < p ? prof->cache_cpus : p) : 1;
  double apart = p > 1 ? 1 - (double)(sharing - 1) / (p - 1) : 0;
  double extra = predict_extra_misses(in, out->steals * apart, (double)((p + sharing - 1) / sharing - 1));
  out->misses = flags & PREDICT_NO_EXTRA_MISSES ? q1 : q1 + extra;
  /* A line of mark bytes another marker wrote since this one's last use
   * comes from that marker's cache, not from memory: the marker waits for
   * it as for one of its own misses (read_m1: marker_miss_ns, measured
   * with sgc's marker), and the memory nodes' queues do not see it. */
  double handoffs = in->handoffs && p > 1 && !(flags & PREDICT_NO_EXTRA_MISSES)
                        ? in->handoffs(in->handoff_data, out->steals, p)
                        : 0;
  double handoffs_ns = handoffs * read_m1 / shared;
  out->handoffs = handoffs;
  out->tp_ns += handoffs_ns;
  double qp = out->misses;
  out->time_ns = flags & PREDICT_NO_CONTENTION
                     ? out->tp_ns + qp * m1 / shared
                     : predict_solve_contention(out->tp_ns, qp, shared, m1, so, nodes, share);
  out->miss_ns = qp > 0 ? (out->time_ns - out->tp_ns) * shared / qp : m1;
  out->term_ns[TERM_WORK] = work;
  out->term_ns[TERM_CRITICAL] = critical;
  out->term_ns[TERM_JOIN] = late + late_misses + serial;
  out->term_ns[TERM_STEALS] = steals_ns;
  out->term_ns[TERM_MISSES] = q1 * m1 / shared;
  out->term_ns[TERM_EXTRA_MISSES] = (qp - q1) * m1 / shared + handoffs_ns;
  out->term_ns[TERM_CONTENTION] = out->time_ns - out->tp_ns - qp * m1 / shared;
  out->limit = TERM_WORK;
  for (int k = 1; k < TERM_COUNT; k++)
    if (out->term_ns[k] > out->term_ns[out->limit]) out->limit = (enum predict_term)k;
}

/* The counts predict_choose looks at: every one to 16, then steps of
 * about 1/16 (a 5% choice needs no finer), and MAX: at most ~60 points,
 * a few microseconds, whatever the CPUs. */
static unsigned next_count(unsigned p, unsigned max) {
  unsigned step = p < 16 ? 1 : p / 16;
  return p < max && p + step > max ? max : p + step;
}

unsigned predict_choose(const struct predict_profile *prof, const struct predict_input *in,
                        unsigned max, double slack, double *chosen_ns) {
  enum { MOST = 128 };
  double times[MOST];
  unsigned counts[MOST], n = 0;
  if (max < 1) max = 1;
  double best = 0;
  for (unsigned p = 1; p <= max && n < MOST; p = next_count(p, max)) {
    struct predict_point pt;
    predict_at(prof, in, p, 0, &pt);
    counts[n] = p;
    times[n++] = pt.time_ns;
    if (p == 1 || pt.time_ns < best) best = pt.time_ns;
    if (p == max) break;
  }
  unsigned k = 0;
  while (times[k] * (1 - slack) > best) k++;
  if (chosen_ns) *chosen_ns = times[k];
  return counts[k];
}

/* ---- profiles ---- */

void predict_profile_default(struct predict_profile *prof) {
  /* An x86-64 server of one memory node, uncalibrated: sgc-calibrate
   * measures these (docs/prediction.md). */
  *prof = (struct predict_profile){
      .name = "default",
      .cpus = 16,
      .nodes = 1,
      .read_miss_ns = 90,
      .read_remote_miss_ns = 90,
      .read_occupancy_ns = 4,
      .rmw_miss_ns = 110,
      .rmw_remote_miss_ns = 110,
      .rmw_occupancy_ns = 8,
      .marker_miss_ns = 12,
      .read_overlap_ns = 12,
      .read_stream_ns = 4,
      .object_ns = 6,
      .word_ns = 0.8,
      .steal_ns = 300,
      .join_ns = 20000,
      .prewake_join_ns = 300,
      .marker_ns = 4000,
      .cache_bytes = 32u << 20,
      .cache_ways = 16,
      .line_bytes = 64,
      .cache_cpus = 1,
      .interleave = false,
  };
}

enum field_type { F_DOUBLE, F_UNSIGNED, F_U64 };
static const struct field {
  const char *key;
  size_t offset;
  enum field_type type;
} fields[] = {
#define FIELD(name, type) {#name, offsetof(struct predict_profile, name), type}
    FIELD(cpus, F_UNSIGNED),
    FIELD(nodes, F_UNSIGNED),
    FIELD(read_miss_ns, F_DOUBLE),
    FIELD(read_remote_miss_ns, F_DOUBLE),
    FIELD(read_occupancy_ns, F_DOUBLE),
    FIELD(rmw_miss_ns, F_DOUBLE),
    FIELD(rmw_remote_miss_ns, F_DOUBLE),
    FIELD(rmw_occupancy_ns, F_DOUBLE),
    FIELD(marker_miss_ns, F_DOUBLE),
    FIELD(read_overlap_ns, F_DOUBLE),
    FIELD(read_stream_ns, F_DOUBLE),
    FIELD(object_ns, F_DOUBLE),
    FIELD(word_ns, F_DOUBLE),
    FIELD(edge_ns, F_DOUBLE),
    FIELD(push_ns, F_DOUBLE),
    FIELD(page_ns, F_DOUBLE),
    FIELD(steal_ns, F_DOUBLE),
    FIELD(join_ns, F_DOUBLE),
    FIELD(prewake_join_ns, F_DOUBLE),
    FIELD(marker_ns, F_DOUBLE),
    FIELD(cache_bytes, F_U64),
    FIELD(cache_ways, F_UNSIGNED),
    FIELD(line_bytes, F_UNSIGNED),
    FIELD(cache_cpus, F_UNSIGNED),
    FIELD(tlb1_entries, F_UNSIGNED),
    FIELD(tlb1_miss_ns, F_DOUBLE),
    FIELD(tlb2_entries, F_UNSIGNED),
    FIELD(tlb2_miss_ns, F_DOUBLE),
#undef FIELD
};

bool predict_profile_parse(const char *text, struct predict_profile *prof, char *error,
                           size_t error_bytes) {
  bool remote_read = false, remote_rmw = false, prewake_join = false;
  unsigned line = 0;
  for (const char *s = text; *s;) {
    const char *end = strchr(s, '\n');
    size_t len = end ? (size_t)(end - s) : strlen(s);
    line++;
    char buf[256];
    if (len >= sizeof buf) {
      snprintf(error, error_bytes, "line %u: too long", line);
      return false;
    }
    memcpy(buf, s, len);
    buf[len] = 0;
    s += len + (end ? 1 : 0);
    char *hash = strchr(buf, '#');
    if (hash) *hash = 0;
    char key[64], value[128], extra[8];
    int got = sscanf(buf, "%63s %127s %7s", key, value, extra);
    if (got <= 0) continue;
    if (got != 2) {
      snprintf(error, error_bytes, "line %u: want \"key value\"", line);
      return false;
    }
    if (!strcmp(key, "name")) {
      snprintf(prof->name, sizeof prof->name, "%.63s", value);
      continue;
    }
    if (!strcmp(key, "placement")) {
      if (!strcmp(value, "interleave")) prof->interleave = true;
      else if (!strcmp(value, "snapshot")) prof->interleave = false;
      else {
        snprintf(error, error_bytes, "line %u: placement is interleave or snapshot", line);
        return false;
      }
      continue;
    }
    const struct field *f = NULL;
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
      if (!strcmp(fields[i].key, key)) f = &fields[i];
    char *stop;
    double v = strtod(value, &stop);
    if (!f || *stop || v < 0 || v != v) {
      snprintf(error, error_bytes, f ? "line %u: %s wants a number >= 0" : "line %u: unknown key %s",
               line, key);
      return false;
    }
    char *at = (char *)prof + f->offset;
    if (f->type == F_DOUBLE) *(double *)at = v;
    else if (f->type == F_UNSIGNED) *(unsigned *)at = (unsigned)v;
    else *(uint64_t *)at = (uint64_t)v;
    if (!strcmp(key, "read_remote_miss_ns")) remote_read = true;
    if (!strcmp(key, "rmw_remote_miss_ns")) remote_rmw = true;
    if (!strcmp(key, "prewake_join_ns")) prewake_join = true;
  }
  /* Profiles from before it was measured: a pre-woken helper waits
   * spinning or yielding, so it joins a few line transfers (a steal's
   * worth) after the phase opens, never later than a sleeper. */
  if (!prewake_join)
    prof->prewake_join_ns = prof->steal_ns < prof->join_ns ? prof->steal_ns : prof->join_ns;
  /* A remote access costs what a local one does unless told. */
  if (!remote_read) prof->read_remote_miss_ns = prof->read_miss_ns;
  if (!remote_rmw) prof->rmw_remote_miss_ns = prof->rmw_miss_ns;
  if (prof->nodes < 1 || prof->line_bytes < 8 || prof->cache_ways < 1) {
    snprintf(error, error_bytes, "nodes, cache_ways must be >= 1 and line_bytes >= 8");
    return false;
  }
  return true;
}

int predict_profile_format(const struct predict_profile *prof, char *buf, size_t bytes) {
  int n = snprintf(buf, bytes, "name %s\nplacement %s\n", prof->name,
                   prof->interleave ? "interleave" : "snapshot");
  for (size_t i = 0; i < sizeof fields / sizeof fields[0] && n >= 0 && (size_t)n < bytes; i++) {
    const char *at = (const char *)prof + fields[i].offset;
    if (fields[i].type == F_DOUBLE)
      n += snprintf(buf + n, bytes - (size_t)n, "%s %.6g\n", fields[i].key, *(const double *)at);
    else if (fields[i].type == F_UNSIGNED)
      n += snprintf(buf + n, bytes - (size_t)n, "%s %u\n", fields[i].key, *(const unsigned *)at);
    else
      n += snprintf(buf + n, bytes - (size_t)n, "%s %llu\n", fields[i].key,
                    (unsigned long long)*(const uint64_t *)at);
  }
  return n;
}
