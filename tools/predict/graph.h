/* The slow predictor's inspection of a snapshot (thesis §4.3.4): work and
 * critical path, and the serial mark's misses from a cache simulation. */
#ifndef SGC_PREDICT_GRAPH_H
#define SGC_PREDICT_GRAPH_H

#include <stdbool.h>
#include <stdint.h>

#include "mark/predict_model.h"
#include "snapshot_read.h"

/* Pieces a range of BYTES becomes when the marker halves it down to
 * SPLIT bytes (mark.c: mid = lo + half rounded down to a word). */
uint64_t graph_pieces(uint64_t bytes, uint64_t split);

struct graph_work {
  double t1_ns;   /* every object (and extra piece) once, every scanned word once */
  double t1_lone_ns; /* the same with the pieces of one marker alone (predict_lone_split) */
  double tinf_ns; /* the longest chain: earliest discovery, split pieces in parallel */
  uint64_t scanned_words, pieces, lone_pieces;
  /* Pointers that find an object already marked (every edge but the one
   * that first finds each object): the profile's edge_ns each, in T_1
   * (sgc-predict adds them; T_inf leaves them out). */
  uint64_t repeat_edges;
};
/* T_1 and T_inf with OBJECT_NS per range popped (object, piece, root)
 * and WORD_NS per word scanned; SPLIT as SGC_SPLIT_BYTES (0: never). */
bool graph_work(const struct snapshot *s, double object_ns, double word_ns, uint64_t split,
                struct graph_work *out);

/* A set-associative cache with LRU replacement. */
struct cache_sim {
  uint64_t *tags; /* sets x ways, most recent first; 0: empty */
  unsigned sets, ways, line_shift;
  uint64_t accesses, misses;
};
bool cache_init(struct cache_sim *c, uint64_t bytes, unsigned ways, unsigned line_bytes);
/* True when ADDRESS's line missed. */
bool cache_access(struct cache_sim *c, uint64_t address);
void cache_free(struct cache_sim *c);
/* The cache a thread actually has, from a dependent chase through random
 * cycles of BYTES[i] (ascending) taking NS[i] a load: the largest size
 * whose loads still mostly hit, that is, took less than halfway from the
 * smallest size's time to MISS_NS (the memory's); BYTES[0] if none did.
 * A guest may hold far less than the cache its sysfs names, shared with
 * other guests (docs/prediction.md, "Calibration"). */
uint64_t cache_capacity_fit(const uint64_t *bytes, const double *ns, unsigned n, double miss_ns);

/* L of §4.3.6: lines live (accessed again later) at an access, averaged
 * over a stream of line numbers, at most CAPACITY lines. */
struct line_life;
struct line_life *line_life_new(void);
void line_life_access(struct line_life *l, uint64_t line);
double line_life_average(const struct line_life *l, double capacity);
/* The same, the access made for RANGE (an object's index); the accesses
 * since the line's last one when another range made that, else 0. */
uint64_t line_life_access_by(struct line_life *l, uint64_t line, uint64_t range);

/* The lines several ranges used, for the extra misses of steals. */
struct graph_lines {
  size_t count;
  double *share;  /* f: the share of the accesses the line is live over */
  uint32_t *uses; /* u: times a range other than the last used it */
  double capacity; /* the cache's lines */
};
bool line_life_lines(const struct line_life *l, double capacity, struct graph_lines *out);
/* predict_input's extra_misses (§4.3.6, line by line): a line live over
 * f of the mark is cut by about CUTS f steals; each cut makes it miss
 * once more, but no more often than CACHES further caches or the u other
 * ranges that use it could: sum of min(CUTS f, CACHES, u), at most
 * CACHES times the cache's lines.  Lines of one range add nothing. */
double graph_extra_misses(const void *lines, double cuts, double caches);
void graph_lines_free(struct graph_lines *g);
void line_life_free(struct line_life *l);

enum { GRAPH_HANDOFF_BUCKETS = 4 * 64 };
struct graph_misses {
  uint64_t accesses;
  /* Accesses to mark bytes' lines, and, by the accesses since (four
   * buckets an octave: graph_handoff_distance), the ones made for another
   * SLO piece than the line's last access: where two markers that took
   * those pieces hand the line between their caches (graph_handoffs). */
  uint64_t mark_accesses;
  uint64_t mark_reuses[GRAPH_HANDOFF_BUCKETS];
  double misses;      /* Q_1 */
  double mark_misses; /* of them, on mark bytes' lines */
  /* The misses weighed by their overlap: each counts 1 / min(n, MLP), n
   * the misses outstanding with it (docs/prediction.md), so these times
   * the latency are the time the misses cost; objects' lines, mark bytes. */
  double object_dependent, mark_dependent;
  /* ... of them, the misses that had others outstanding with them (n > 1),
   * which the pushes' work runs beside (push_ns below). */
  double object_overlapped, mark_overlapped;
  /* Objects that went through the prefetch window (not roots, not
   * scanned alone as a list's are), and their pushes' work: the profile's
   * push_ns each, in T_1 (sgc-predict adds it).  That work depends on no
   * miss, so the core does it while overlapped misses are outstanding:
   * graph_miss_ns takes up to this much off those misses' cost. */
  uint64_t windowed;
  double push_ns;
  /* Misses the hardware's stream prefetcher fetched ahead (a miss within
   * 2 lines of a recent one, same 4 KiB page), and the same weighed by
   * the share of read_stream_ns the marker's work since the stream's
   * last line leaves to wait (the prefetcher fetches while the marker
   * works): these times read_stream_ns are what they cost. */
  double streamed, mark_streamed;
  double stream_exposed, mark_stream_exposed;
  /* What the translations of cached and streamed lines added (the
   * simulated TLB's misses, tools/predict/tlb.h). */
  double tlb_ns;
  /* Pointers whose target lies on another page than the pointer before
   * (mark.c's one-entry page cache misses and walks the page map): the
   * profile's page_ns each, in T_1 (sgc-predict adds them). */
  uint64_t page_walks;
  double live_lines;  /* L */
  struct graph_lines lines; /* graph_lines_free */
  unsigned nodes;
  double node_share[PREDICT_MAX_NODES];
};
/* How the simulated cache starts: cold; holding what a mutator touching
 * every live object in address order leaves (a heap smaller than the
 * cache then misses little); or what the same mark run once before
 * leaves (a collection after another of the same heap). */
enum { GRAPH_COLD = 0, GRAPH_WARM = 1, GRAPH_REPEAT = 2 };
/* Runs the serial mark (depth first, last found first, through the
 * marker's prefetch window) over S through a cache of PROF's shape,
 * starting as WARM says. */
bool graph_misses(const struct snapshot *s, const struct predict_profile *prof, int warm,
                  struct graph_misses *out);

/* The bucket of mark_reuses a distance of D accesses falls in, and a
 * bucket's middle distance. */
unsigned graph_handoff_bucket(uint64_t d);
double graph_handoff_distance(unsigned bucket);
/* predict_input's handoffs: the mark_reuses of MISSES (a struct
 * graph_misses) that CUTS steals put on different markers, of P: a reuse
 * D accesses after the last falls on another marker's part of the mark
 * with chance min(1, CUTS D / A) (A: mark_accesses), and then on another
 * marker (P - 1)/P of the time. */
double graph_handoffs(const void *misses, double cuts, unsigned p);

/* The memory-level parallelism of PROF's host: read_miss_ns over
 * read_overlap_ns, between 1 and the prefetch depth. */
double graph_mlp(const struct predict_profile *prof);
/* What one miss with IN_FLIGHT misses outstanding costs, in latencies:
 * 1 / min(IN_FLIGHT, MLP), at most 1. */
double graph_overlap(double in_flight, double mlp);
/* M_1 of the slow predictor: the misses' latencies (local and remote by
 * the shares given, RMW mark bytes when RMW) weighed by their overlap,
 * per miss. */
double graph_miss_ns(const struct graph_misses *g, const struct predict_profile *prof,
                     double object_remote, double mark_remote, bool rmw);

/* The NUMA forecast (docs/numa.md): IN's node shares and M_1 on PROF's
 * nodes.  The objects' misses go to the nodes by SHARES (even when
 * NULL), the mark bytes' evenly under BMB or else all to the node holding
 * most of the heap (where it grew, so where its page headers were first
 * touched); a GC thread finds REMOTE of its object accesses on another
 * node (< 0: (N - 1)/N, the markers spread evenly and scanning whatever
 * they find) and (N - 1)/N of its mark bytes. */
void graph_numa_input(const struct graph_misses *g, const struct predict_profile *prof,
                      const double *shares, double remote, bool bmb, bool rmw,
                      struct predict_input *in);

#endif
