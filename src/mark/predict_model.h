/* The thesis's model of a parallel mark's time (ch. 4, §4.3), shared by
 * the library's fast predictor (mark/predict.c) and the tools
 * (tools/predict/): the inputs are a heap's work and misses, the machine
 * is a profile (docs/prediction.md).  Pure arithmetic on doubles: it
 * includes nothing of sgc's, so the tools compile it on its own. */
#ifndef SGC_PREDICT_MODEL_H
#define SGC_PREDICT_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum {
  PREDICT_MAX_NODES = 64,
  PREDICT_PREFETCH_DEPTH = 16, /* mark.c's prefetch window */
  PREDICT_LONE_SPLIT_BYTES = 4096 /* mark.c's LONE_SPLIT_BYTES: a lone marker's pieces */
};

/* A machine (Table 4.1 and sgc's own costs); every time in ns. */
struct predict_profile {
  char name[64];
  unsigned cpus;  /* processors of the machine (informative) */
  unsigned nodes; /* memory nodes, each a queue of its own */
  /* Pointer-chasing latency M_1 and a node's occupancy S_O per request,
   * for reads and atomic read-modify-writes; remote: another node's. */
  double read_miss_ns, read_remote_miss_ns, read_occupancy_ns;
  double rmw_miss_ns, rmw_remote_miss_ns, rmw_occupancy_ns;
  /* What one miss costs sgc's marker, whose prefetch window overlaps
   * misses with scanning (the thesis ignores overlap, §4.3.2); 0: the
   * pointer-chasing latency. */
  double marker_miss_ns;
  /* Time per load miss with PREDICT_PREFETCH_DEPTH independent misses in
   * flight in one thread (the marker's prefetch window); latency over it
   * is the memory-level parallelism the slow predictor overlaps misses
   * by (docs/prediction.md); 0: no overlap. */
  double read_overlap_ns;
  /* Time per line of one thread reading memory in address order (the
   * hardware's prefetcher ahead of it); 0: the latency. */
  double read_stream_ns;
  double object_ns; /* per object (or piece) marked: look-up, mark, push, pop */
  double word_ns;   /* per word scanned, hits only */
  double edge_ns;   /* per pointer finding an object already marked, beyond word_ns */
  /* per object found that holds pointers, beyond object_ns (which a
   * pointer-free object costs): its range pushed, popped, prefetched */
  double push_ns;
  /* per pointer into another page than the marker's last (mark.c's
   * one-entry page cache missed: the page map walked), beyond the rest */
  double page_ns;
  double steal_ns;  /* one successful steal */
  double join_ns;   /* from a mark's start until a sleeping GC thread joins it */
  /* ... until one the collector pre-woke joins it (parallel.c wakes the
   * coming mark's GC threads before the world stops when each has a CPU
   * of its own: P <= cpus); a profile without it: min(join_ns, steal_ns),
   * a few cache-line transfers, as the waiting helper spins or yields. */
  double prewake_join_ns;
  double marker_ns; /* serial cost of each marker past the first (wake, termination) */
  /* The last-level cache the serial mark's misses are simulated in. */
  uint64_t cache_bytes;
  unsigned cache_ways, line_bytes;
  unsigned cache_cpus; /* CPUs sharing it: a steal among them misses nothing more */
  /* The data TLB's two levels the slow predictor simulates (4 KiB pages,
   * as sgc's heap and headers have): each level's entries (0: not
   * simulated) and what missing it adds to an access whose line is
   * cached or streamed (a dependent miss's latency, measured far past
   * both, holds its translation already). */
  unsigned tlb1_entries, tlb2_entries;
  double tlb1_miss_ns, tlb2_miss_ns;
  /* Where the heap's lines are: true: spread evenly over the nodes
   * (interleaved pages), false: the snapshot's nodes. */
  bool interleave;
};

/* A heap's figures, the model's inputs (§4.3.4). */
struct predict_input {
  double t1_ns;      /* work without misses, the ranges split as markers that share do */
  /* ... as one marker alone splits them (predict_lone_split): P = 1's
   * work; 0: t1_ns. */
  double t1_lone_ns;
  double tinf_ns;    /* critical path */
  double misses;     /* Q_1, the serial mark's */
  double live_lines; /* L: lines each steal makes miss again (§4.3.6) */
  /* The extra misses of CUTS steals with CACHES further caches, line by
   * line (the slow predictor: tools/predict/graph.c), from LINES; NULL:
   * N_S L (§4.3.6). */
  double (*extra_misses)(const void *lines, double cuts, double caches);
  const void *lines;
  /* The times CUTS steals make P markers hand a line of mark bytes from
   * one's cache to another's (the slow predictor: graph_handoffs, from
   * HANDOFF_DATA); NULL: none. */
  double (*handoffs)(const void *handoff_data, double cuts, unsigned p);
  const void *handoff_data;
  double rmw_share;  /* of the misses, those of atomic read-modify-writes */
  /* How the GC threads could join, as a snapshot saw it (the slow
   * predictor; the fast one leaves WAKE_KNOWN false): LEAD_NS from the
   * collector's pre-wake to the mark's start, IDLE_CPUS the CPUs nothing
   * ran on then.  A pre-woken helper on an idle CPU runs join_ns (an idle
   * CPU's wake-up) after the pre-wake, so it joins max(prewake_join_ns,
   * join_ns - LEAD_NS) into the mark; one on a busy CPU prewake_join_ns. */
  bool wake_known;
  double lead_ns;
  unsigned idle_cpus;
  /* M_1 as the slow predictor's simulation found it (overlap, remote
   * share and RMWs weighed in); 0: from the profile. */
  double miss_ns;
  unsigned nodes;    /* entries of node_share; 0: all on node 0 */
  double node_share[PREDICT_MAX_NODES]; /* V_j: accesses to node j over all */
};

enum {
  PREDICT_NO_CONTENTION = 1,  /* M_P = M_1 (Fig. 4.4's "Pred(M_P = M_1)") */
  PREDICT_NO_EXTRA_MISSES = 2 /* Q_P = Q_1 */
};

/* The terms of T_P^M at one P (each the share it adds, in ns). */
enum predict_term {
  TERM_WORK,         /* T_1 / P */
  TERM_CRITICAL,     /* T_inf beyond T_1 / P */
  TERM_JOIN,         /* GC threads joining late (the work and misses the
                      * collector does alone meanwhile), each marker's serial cost */
  TERM_STEALS,       /* N_S steals */
  TERM_MISSES,       /* Q_1 M_1 / P */
  TERM_EXTRA_MISSES, /* (Q_P - Q_1) M_1 / P */
  TERM_CONTENTION,   /* Q_P (M_P - M_1) / P */
  TERM_COUNT
};
extern const char *const predict_term_names[TERM_COUNT];

struct predict_point {
  unsigned p;
  double time_ns;   /* T_P^M */
  double tp_ns;     /* T_P: without the shared misses' costs (those the
                     * collector takes alone before the helpers join are in
                     * it, and the handoffs') */
  double steals;    /* N_S */
  double misses;    /* Q_P */
  double handoffs;  /* of them, mark bytes' lines handed between markers */
  double miss_ns;   /* M_P */
  double term_ns[TERM_COUNT];
  enum predict_term limit; /* the largest term */
};

/* The extra misses of N_S CUTS with CACHES further caches: IN's
 * extra_misses, or N_S L without one. */
double predict_extra_misses(const struct predict_input *in, double cuts, double caches);

/* T_P^M for P markers (§4.3.1 step 5), FLAGS leaving terms out.  The
 * misses are shared by min(P, T_1 / T_inf) markers, not P. */
void predict_at(const struct predict_profile *prof, const struct predict_input *in, unsigned p,
                unsigned flags, struct predict_point *out);

/* The contention fixed point of §4.3.7 on its own: the T solving
 * T = BASE + (Q / P) (M_1 + sum_j V_j S_O rho_j / (1 - rho_j)),
 * rho_j = S_O V_j Q / T, by Newton's method kept inside a bracket (P
 * may be fractional: the markers that share the misses). */
double predict_solve_contention(double base_ns, double q, double p, double m1, double so,
                                unsigned nodes, const double *share);

/* The fewest markers, from 1 to MAX, whose predicted time is within
 * SLACK (0.05: 5%) of the best (thesis Table 4.4); *CHOSEN_NS gets its
 * time.  Past 16 it looks at counts about 1/16 apart, and MAX. */
unsigned predict_choose(const struct predict_profile *prof, const struct predict_input *in,
                        unsigned max, double slack, double *chosen_ns);

/* Profiles: "key value" lines, '#' comments (docs/prediction.md).
 * predict_profile_default: this kind of host, uncalibrated. */
void predict_profile_default(struct predict_profile *prof);
/* Parses TEXT over PROF's values; false with ERROR filled on a bad line. */
bool predict_profile_parse(const char *text, struct predict_profile *prof, char *error,
                           size_t error_bytes);
/* Writes PROF as a profile's text into BUF; the length, as snprintf. */
int predict_profile_format(const struct predict_profile *prof, char *buf, size_t bytes);

/* The split a marker draining alone uses for SPLIT (mark.c's
 * mark_configure_drain): long ranges halved only down to
 * PREDICT_LONE_SPLIT_BYTES; 0 (never split) stays 0. */
uint64_t predict_lone_split(uint64_t split);

/* ln(x) for x > 0, without libm (the library links none). */
double predict_ln(double x);

#endif
