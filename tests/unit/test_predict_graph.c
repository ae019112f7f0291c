/* The slow predictor's pieces against hand-computed answers
 * (docs/prediction.md): T_1 and T_inf of a list, a wide tree and one big
 * array split as the marker splits it; the LRU cache and the live lines
 * on known access streams; the serial mark's misses on a two-object heap,
 * and streamed lines covered by the marker's work; the mark bytes' lines
 * reused by another SLO piece (handoffs); a snapshot written and read
 * back exactly.  Costs: 10 ns per object or
 * piece, 1 ns per word. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "graph.h"
#include "tlb.h"
#include "snapshot_read.h"
#include "unit.h"

#define NEAR(a, b) ((a) - (b) < 1e-9 && (b) - (a) < 1e-9)

struct builder {
  struct snapshot s;
  size_t cap_objects, cap_edges;
};

static void init(struct builder *b) {
  memset(b, 0, sizeof *b);
  memcpy(b->s.header.magic, SNAPSHOT_MAGIC, 8);
  b->s.header.version = SNAPSHOT_VERSION;
  b->s.header.word_bytes = 8;
  b->s.header.page_bytes = 4096;
  b->s.header.split_bytes = 256;
  b->s.header.nodes = 1;
  b->cap_objects = b->cap_edges = 4096;
  b->s.objects = calloc(b->cap_objects, sizeof *b->s.objects);
  b->s.edges = calloc(b->cap_edges, sizeof *b->s.edges);
}

static uint32_t object(struct builder *b, uint64_t address, uint64_t bytes, uint8_t kind) {
  uint32_t i = (uint32_t)b->s.header.objects++;
  if (kind == SNAP_ROOT) b->s.header.roots++;
  b->s.objects[i] = (struct snapshot_object){.address = address, .bytes = bytes, .kind = kind};
  return i;
}

/* Edges must be added source by source, words ascending. */
static void edge(struct builder *b, uint32_t from, uint32_t word, uint32_t to) {
  struct snapshot_object *o = &b->s.objects[from];
  if (!o->edge_count) o->first_edge = b->s.header.edges;
  o->edge_count++;
  b->s.edges[b->s.header.edges++] = (struct snapshot_edge){word, to};
}

/* A new graph: a root range of one word at 0x1000 finding an object of
 * BYTES at 0x100000, whose index it returns. */
static uint32_t rooted(struct builder *b, uint64_t bytes, uint8_t kind) {
  init(b);
  uint32_t root = object(b, 0x1000, 8, SNAP_ROOT), first = object(b, 0x100000, bytes, kind);
  edge(b, root, 0, first);
  return first;
}

/* T_1 and T_inf at 10 ns per range, 1 per word. */
static void check_work(struct builder *b, uint64_t split, double t1, double tinf, const char *name) {
  struct graph_work w;
  CHECK(graph_work(&b->s, 10, 1, split, &w), "%s", name);
  CHECK(NEAR(w.t1_ns, t1), "%s: T1 %f, want %f", name, w.t1_ns, t1);
  CHECK(NEAR(w.tinf_ns, tinf), "%s: Tinf %f, want %f", name, w.tinf_ns, tinf);
}

static void test_list(void) {
  struct builder b;
  uint32_t prev = rooted(&b, 16, SNAP_SCANNED);
  for (int k = 1; k < 100; k++) {
    uint32_t node = object(&b, 0x100000 + 16 * k, 16, SNAP_SCANNED);
    edge(&b, prev, 0, node);
    prev = node;
  }
  /* 101 ranges x 10 + (1 + 200) words; node k is available when node
   * k - 1's scan ends (the root's at 11, each node's 12 later): node 99
   * at 1199, ending at 1211.  T_inf = T_1: nothing to share. */
  check_work(&b, 256, 1211, 1211, "list");
  snapshot_free(&b.s);
}

static void test_wide_tree(void) {
  struct builder b;
  uint32_t a = rooted(&b, 32, SNAP_SCANNED);
  for (uint32_t k = 0; k < 4; k++) edge(&b, a, k, object(&b, 0x200000 + 32 * k, 32, SNAP_SCANNED));
  /* 6 ranges x 10 + 21 words; A starts at 11, the leaves when its scan
   * ends, at 11 + 10 + 4 = 25, and end at 25 + 10 + 4. */
  check_work(&b, 256, 81, 39, "tree");
  snapshot_free(&b.s);
}

/* Pointers that find an object already marked: A (32 bytes) points at
 * L twice, at L2, and back at itself: 5 edges (the root's too) for 3
 * objects found, so 2 repeats, each edge_ns in T_1 (sgc-predict). */
static void test_repeat_edges(void) {
  struct builder b;
  uint32_t a = rooted(&b, 32, SNAP_SCANNED);
  uint32_t leaf = object(&b, 0x200000, 16, SNAP_SCANNED), other = object(&b, 0x200020, 16, SNAP_SCANNED);
  edge(&b, a, 0, leaf);
  edge(&b, a, 1, leaf);
  edge(&b, a, 2, other);
  edge(&b, a, 3, a);
  struct graph_work w;
  CHECK(graph_work(&b.s, 10, 1, 256, &w), "work");
  CHECK(w.repeat_edges == 2, "repeat edges %llu", (unsigned long long)w.repeat_edges);
  /* The marker's one-entry page cache: the root's pointer walks A's
   * page, A's first walks L's, the next two stay on it, the last walks
   * A's page again: 3 walks of 5 pointers. */
  struct predict_profile prof;
  predict_profile_default(&prof);
  struct graph_misses m;
  CHECK(graph_misses(&b.s, &prof, false, &m) && m.page_walks == 3, "page walks %llu",
        (unsigned long long)m.page_walks);
  graph_lines_free(&m.lines);
  /* 4 ranges x 10 + (1 + 4 + 2 + 2) words: the repeats add nothing here. */
  CHECK(NEAR(w.t1_ns, 49), "T1 %f", w.t1_ns);
  snapshot_free(&b.s);
}

static void test_big_array(void) {
  struct builder b;
  uint32_t array = rooted(&b, 4096, SNAP_SCANNED);
  for (uint32_t k = 0; k < 512; k++)
    edge(&b, array, k, object(&b, 0x200000 + 16 * k, 16, SNAP_ATOMIC));
  CHECK(graph_pieces(4096, 256) == 16, "pieces %llu", (unsigned long long)graph_pieces(4096, 256));
  CHECK(graph_pieces(4096, 0) == 1 && graph_pieces(100, 256) == 1, "no split");
  CHECK(graph_pieces(1000, 256) == 4, "1000 bytes: 496 + 504, then 248 each (%llu)",
        (unsigned long long)graph_pieces(1000, 256));
  /* Root 11; array 16 pieces x 10 + 512 words; leaves 512 x 10.  Four
   * halvings put every piece at 11 + 40 = 51; a piece's scan ends at
   * 51 + 10 + 32 = 93, when its leaves are available, ending at 103. */
  check_work(&b, 256, 5803, 103, "split array");
  struct graph_work w;
  CHECK(graph_work(&b.s, 10, 1, 256, &w) && w.pieces == 1 + 16 + 512, "pieces %llu",
        (unsigned long long)w.pieces);
  /* Unsplit: one range of 512 words, its leaves available at 11 + 10 + 512. */
  check_work(&b, 0, 5653, 543, "unsplit array");
  /* One marker alone halves only down to 4096 bytes (mark.c's
   * LONE_SPLIT_BYTES): the array is one piece, so T_1 alone is the
   * unsplit 5653 (1 + 1 + 512 ranges x 10 + 513 words). */
  CHECK(predict_lone_split(256) == 4096 && predict_lone_split(64) == 4096, "lone split");
  CHECK(predict_lone_split(0) == 0 && predict_lone_split(8192) == 8192, "lone split kept");
  CHECK(w.lone_pieces == 1 + 1 + 512 && NEAR(w.t1_lone_ns, 5653), "alone: %llu pieces, %f",
        (unsigned long long)w.lone_pieces, w.t1_lone_ns);
  snapshot_free(&b.s);
}

static void test_cache(void) {
  /* 2 sets x 2 ways of 64-byte lines; lines 0, 2, 4 share set 0. */
  struct cache_sim c;
  CHECK(cache_init(&c, 256, 2, 64), "init");
  static const uint64_t stream[] = {0, 128, 0, 256, 128, 64, 0};
  static const bool miss[] = {true, true, false, true, true, true, true};
  for (int i = 0; i < 7; i++)
    CHECK(cache_access(&c, stream[i]) == miss[i], "access %d (address %llu)", i,
          (unsigned long long)stream[i]);
  CHECK(c.misses == 6 && c.accesses == 7, "misses %llu", (unsigned long long)c.misses);
  CHECK(!cache_access(&c, 8) && !cache_access(&c, 130), "same lines hit");
  cache_free(&c);
  CHECK(!cache_init(&c, 256, 2, 48), "lines are powers of two");

  /* Lines 1 2 1 3 2: live spans 2 + 3 + 0 over 5 accesses. */
  struct line_life *l = line_life_new();
  static const uint64_t lines[] = {1, 2, 1, 3, 2};
  for (int i = 0; i < 5; i++) line_life_access(l, lines[i]);
  CHECK(NEAR(line_life_average(l, 1000), 1.0), "L %f", line_life_average(l, 1000));
  CHECK(NEAR(line_life_average(l, 0.5), 0.5), "L capped");
  line_life_free(l);
  /* Lines 1 2 1 3 2 2 for ranges 0 0 1 1 2 3: line 1 live over 2/6 of
   * the accesses and used by 1 more range, line 2 over 4/6 and by 2
   * more, line 3 by one range (nothing to re-miss).  The extra misses:
   * sum of min(cuts f, caches, uses). */
  l = line_life_new();
  static const uint64_t ranges[] = {0, 0, 1, 1, 2, 3};
  static const uint64_t again[] = {1, 2, 1, 3, 2, 2};
  for (int i = 0; i < 6; i++) line_life_access_by(l, again[i], ranges[i]);
  struct graph_lines g;
  CHECK(line_life_lines(l, 1000, &g) && g.count == 2, "lines %zu", g.count);
  struct predict_input in = {.live_lines = 1, .extra_misses = graph_extra_misses, .lines = &g};
  CHECK(NEAR(predict_extra_misses(&in, 1, 5), 1), "one cut: 1/3 + 2/3 = L");
  CHECK(NEAR(predict_extra_misses(&in, 3, 5), 1 + 2), "3 cuts: 1 + 2");
  CHECK(NEAR(predict_extra_misses(&in, 40, 5), 1 + 2), "at most each line's other ranges");
  CHECK(NEAR(predict_extra_misses(&in, 40, 1), 1 + 1), "at most once per further cache");
  CHECK(NEAR(predict_extra_misses(&in, 40, 0), 0), "no further cache");
  g.capacity = 1.5;
  CHECK(NEAR(predict_extra_misses(&in, 40, 1), 1.5), "at most the cache's lines a cache");
  in.extra_misses = NULL;
  CHECK(NEAR(predict_extra_misses(&in, 40, 1), 40), "without lines: N_S L");
  graph_lines_free(&g);
  line_life_free(l);

  /* The capacity a chase finds (the AMD VM's figures, 1 to 64 MiB, the
   * memory at 150 ns): halfway is 78 ns, which 8 MiB (53) stays under
   * and 16 (136) does not.  Nothing under: the smallest; all: the
   * largest; a size past the first slow one never counts. */
  const uint64_t mib = 1 << 20;
  uint64_t sizes[] = {mib, 2 * mib, 4 * mib, 8 * mib, 16 * mib, 32 * mib, 64 * mib};
  double ns[] = {6, 10.8, 12.1, 53, 136.3, 150.7, 158.3};
  CHECK(cache_capacity_fit(sizes, ns, 7, 150) == 8 * mib, "capacity %llu",
        (unsigned long long)cache_capacity_fit(sizes, ns, 7, 150));
  CHECK(cache_capacity_fit(sizes, ns, 7, 10) == mib, "none under halfway");
  CHECK(cache_capacity_fit(sizes, ns, 7, 1000) == 64 * mib, "all under halfway");
  double dip[] = {6, 100, 12, 12, 12, 12, 12};
  CHECK(cache_capacity_fit(sizes, dip, 7, 150) == mib, "stops at the first slow size");
  CHECK(cache_capacity_fit(sizes, ns, 0, 150) == 0, "no sizes");
}

/* sgc-calibrate's TLB fit: chases over 16 ... 16384 pages costing
 * c1 (1 - e1/N)+ + c2 (1 - e2/N)+ more than their lines side by side
 * give back e1, e2, c1, c2; one level alone; none. */
static void test_tlb_fit(void) {
  unsigned n[11];
  double y[11];
  for (unsigned k = 0; k < 11; k++) {
    n[k] = 16u << k;
    y[k] = 2 * (n[k] > 64 ? 1 - 64.0 / n[k] : 0) + 20 * (n[k] > 2048 ? 1 - 2048.0 / n[k] : 0);
  }
  struct tlb_fit f;
  CHECK(tlb_fit(n, y, 11, &f), "fit");
  CHECK(f.entries[0] == 64 && f.entries[1] == 2048 && NEAR(f.cost[0], 2) && NEAR(f.cost[1], 20),
        "two levels: %u %u %f %f", f.entries[0], f.entries[1], f.cost[0], f.cost[1]);
  for (unsigned k = 0; k < 11; k++) y[k] = 3 * (n[k] > 128 ? 1 - 128.0 / n[k] : 0);
  CHECK(tlb_fit(n, y, 11, &f) && f.entries[0] == 128 && f.entries[1] == 0 && NEAR(f.cost[0], 3),
        "one level: %u %u %f", f.entries[0], f.entries[1], f.cost[0]);
  for (unsigned k = 0; k < 11; k++) y[k] = 0;
  CHECK(tlb_fit(n, y, 11, &f) && f.entries[0] == 0 && f.entries[1] == 0, "none: %u %u", f.entries[0],
        f.entries[1]);
}

static void test_serial_misses(void) {
  struct builder b;
  rooted(&b, 16, SNAP_SCANNED);
  struct predict_profile prof;
  predict_profile_default(&prof);
  struct graph_misses m;
  CHECK(graph_misses(&b.s, &prof, false, &m), "misses");
  /* The root's word, the object's page header and mark byte (two lines),
   * the object's two words (one line): 5 accesses, 4 misses; only the
   * object's line is used twice (accesses 3 and 4), so L = 1/5. */
  CHECK(m.accesses == 5, "accesses %llu", (unsigned long long)m.accesses);
  CHECK(NEAR(m.misses, 4) && NEAR(m.mark_misses, 2), "misses %f %f", m.misses, m.mark_misses);
  CHECK(NEAR(m.live_lines, 0.2), "L %f", m.live_lines);
  CHECK(m.nodes == 1 && NEAR(m.node_share[0], 1), "one node");
  /* Warm: the root's and the object's lines are cached; the header's miss. */
  graph_lines_free(&m.lines);
  CHECK(graph_misses(&b.s, &prof, GRAPH_WARM, &m), "warm");
  CHECK(m.accesses == 5 && NEAR(m.misses, 2) && NEAR(m.mark_misses, 2), "warm misses %f", m.misses);
  graph_lines_free(&m.lines);
  /* The same mark once before: all four lines cached, the counts are the
   * second mark's alone (5 accesses, L = 1/5 again). */
  CHECK(graph_misses(&b.s, &prof, GRAPH_REPEAT, &m), "repeat");
  CHECK(m.accesses == 5 && NEAR(m.misses, 0) && NEAR(m.live_lines, 0.2), "repeat: %llu accesses, %f misses",
        (unsigned long long)m.accesses, m.misses);
  graph_lines_free(&m.lines);
  snapshot_free(&b.s);
}

/* The overlap of misses (docs/prediction.md): a miss with n outstanding
 * costs latency / min(n, MLP), MLP = read_miss_ns / read_overlap_ns at
 * most the prefetch depth. */
static void test_overlap_formula(void) {
  struct predict_profile prof;
  predict_profile_default(&prof);
  prof.read_miss_ns = 200;
  prof.read_overlap_ns = 25;
  CHECK(NEAR(graph_mlp(&prof), 8), "MLP 200 / 25 = %f", graph_mlp(&prof));
  prof.read_overlap_ns = 5;
  CHECK(NEAR(graph_mlp(&prof), 16), "MLP capped at the window: %f", graph_mlp(&prof));
  prof.read_overlap_ns = 0;
  CHECK(NEAR(graph_mlp(&prof), 1), "no overlap measured: %f", graph_mlp(&prof));
  prof.read_overlap_ns = 300;
  CHECK(NEAR(graph_mlp(&prof), 1), "slower than the latency: %f", graph_mlp(&prof));
  CHECK(NEAR(graph_overlap(1, 8), 1) && NEAR(graph_overlap(4, 8), 0.25) &&
            NEAR(graph_overlap(12, 8), 0.125) && NEAR(graph_overlap(0.5, 8), 1),
        "1 / min(n, MLP)");
}

/* A root finding A (32 bytes, 4 pointers) finding four 16-byte leaves,
 * every object on a page of its own (no line near another's): the marker
 * scans the root and A alone (nothing else on the stack), then the four
 * leaves go through the prefetch window together. */
static void test_window_misses(void) {
  struct builder b;
  uint32_t a = rooted(&b, 32, SNAP_SCANNED);
  for (uint32_t k = 0; k < 4; k++) {
    uint32_t leaf = object(&b, 0x200000 + 0x100000 * (uint64_t)k, 16, SNAP_SCANNED);
    edge(&b, a, k, leaf);
  }
  struct predict_profile prof;
  predict_profile_default(&prof);
  prof.read_miss_ns = 100;
  prof.read_overlap_ns = 25; /* MLP 4 */
  prof.read_stream_ns = 10;
  struct graph_misses m;
  CHECK(graph_misses(&b.s, &prof, false, &m), "misses");
  /* Misses: the root's line and A's (alone: 1 each); a header and a mark
   * line for each of A and the leaves (10; headers alone: 1 each; each
   * mark line 2 lines past its header in the same 4 KiB: streamed); the
   * leaves' lines, fetched together, scanned with 4, 3, 2, 1 outstanding.
   * In latencies: 1 + 1 + 1/4 + 1/3 + 1/2 + 1 and 5 headers; 5 streamed. */
  CHECK(NEAR(m.misses, 16) && NEAR(m.mark_misses, 10), "misses %f, marks %f", m.misses, m.mark_misses);
  CHECK(NEAR(m.streamed, 5) && NEAR(m.mark_streamed, 5), "streamed %f", m.streamed);
  CHECK(NEAR(m.object_dependent, 4 + 1.0 / 12), "objects %f", m.object_dependent);
  CHECK(NEAR(m.mark_dependent, 5), "headers %f", m.mark_dependent);
  CHECK(m.page_walks == 5, "every pointer another page: %llu", (unsigned long long)m.page_walks);
  /* M_1 = (4.0833 x 100 + 5 x 100 + 5 x 10) / 16 = 59.8958 ns. */
  double m1 = graph_miss_ns(&m, &prof, 0, 0, false);
  CHECK(NEAR(m1, (4 + 1.0 / 12 + 5) * 100 / 16 + 50.0 / 16), "M1 %f", m1);
  /* The four leaves went through the window (A, scanned alone, did not),
   * and their fetches with 4, 3, 2 outstanding overlapped others: 13/12
   * latencies (108.3 ns) the pushes' work runs beside.  At 10 ns a push
   * it hides 40 ns of them; at 50, all 108.3. */
  CHECK(m.windowed == 4, "windowed %llu", (unsigned long long)m.windowed);
  CHECK(NEAR(m.object_overlapped, 13.0 / 12) && NEAR(m.mark_overlapped, 0), "overlapped %f %f",
        m.object_overlapped, m.mark_overlapped);
  graph_lines_free(&m.lines);
  prof.push_ns = 10;
  CHECK(graph_misses(&b.s, &prof, false, &m) && NEAR(m.push_ns, 40), "push %f", m.push_ns);
  m1 = graph_miss_ns(&m, &prof, 0, 0, false);
  CHECK(NEAR(m1, ((4 + 1.0 / 12 + 5) * 100 + 50 - 40) / 16), "M1 with pushes %f", m1);
  graph_lines_free(&m.lines);
  prof.push_ns = 50;
  CHECK(graph_misses(&b.s, &prof, false, &m), "misses");
  m1 = graph_miss_ns(&m, &prof, 0, 0, false);
  CHECK(NEAR(m1, ((4 + 1.0 / 12 + 5) * 100 + 50 - 1300.0 / 12) / 16), "M1, pushes past them %f", m1);
  graph_lines_free(&m.lines);
  prof.push_ns = 0;
  CHECK(graph_misses(&b.s, &prof, false, &m), "misses");
  /* Remote: half the objects' misses at 300 (200 on average), the mark
   * bytes local; then the mark bytes all remote, their streamed lines as
   * much slower as the latency (30). */
  prof.read_remote_miss_ns = 300;
  m1 = graph_miss_ns(&m, &prof, 0.5, 0, false);
  CHECK(NEAR(m1, ((4 + 1.0 / 12) * 200 + 5 * 100 + 5 * 10) / 16), "remote M1 %f", m1);
  m1 = graph_miss_ns(&m, &prof, 0, 1, false);
  CHECK(NEAR(m1, ((4 + 1.0 / 12) * 100 + 5 * 300 + 5 * 30) / 16), "remote marks M1 %f", m1);
  /* Marks set by RMWs (150 ns each, no overlap) and the streamed
   * mark lines among them. */
  prof.rmw_miss_ns = 150;
  m1 = graph_miss_ns(&m, &prof, 0, 0, true);
  CHECK(NEAR(m1, ((4 + 1.0 / 12) * 100 + 10 * 150) / 16), "RMW M1 %f", m1);
  graph_lines_free(&m.lines);
  /* A first-level TLB of 2 entries (8 ns a miss): the pages go root,
   * A's header, A, each leaf's header with A between, then the four
   * leaves fetched, then scanned.  The misses' latencies hold their
   * translations, and each mark line follows its header on that page;
   * but the four fetches outrun the TLB, so each leaf's scan, its line
   * cached, misses it again: 4 x 8 ns, M_1 32 / 16 ns more.  A second
   * level of 8 entries holds them all (still 32); one of 2 (30 ns) misses
   * them too, being asked on first-level misses only (4 x 38).  With 1
   * entry and no second level, A's page is gone again at each of its 3
   * cached words as well: 7 x 8. */
  prof.tlb1_entries = 2;
  prof.tlb1_miss_ns = 8;
  CHECK(graph_misses(&b.s, &prof, false, &m), "misses with a TLB");
  CHECK(NEAR(m.misses, 16) && NEAR(m.tlb_ns, 32), "TLB of 2: %f ns", m.tlb_ns);
  m1 = graph_miss_ns(&m, &prof, 0, 0, false);
  CHECK(NEAR(m1, (4 + 1.0 / 12 + 5) * 100 / 16 + 50.0 / 16 + 32.0 / 16), "TLB M1 %f", m1);
  graph_lines_free(&m.lines);
  prof.tlb2_entries = 8;
  prof.tlb2_miss_ns = 30;
  CHECK(graph_misses(&b.s, &prof, false, &m) && NEAR(m.tlb_ns, 32), "second level of 8: %f", m.tlb_ns);
  graph_lines_free(&m.lines);
  prof.tlb2_entries = 2;
  CHECK(graph_misses(&b.s, &prof, false, &m) && NEAR(m.tlb_ns, 4 * 38), "second level of 2: %f",
        m.tlb_ns);
  graph_lines_free(&m.lines);
  prof.tlb1_entries = 1;
  prof.tlb2_entries = 0;
  CHECK(graph_misses(&b.s, &prof, false, &m) && NEAR(m.tlb_ns, 7 * 8), "TLB of 1: %f", m.tlb_ns);
  graph_lines_free(&m.lines);
  snapshot_free(&b.s);
}

/* A 2-node forecast: 10 misses, 2 on mark bytes, each a full latency
 * (no overlap); objects 3:1 over the nodes; 100 ns local, 300 remote. */
/* A streamed line costs the part of read_stream_ns the marker's work
 * since its stream's last line leaves (docs/prediction.md).  The root
 * finds A (128 bytes: two lines), scanned alone: misses on the root's
 * line, A's header and A's first line (1 latency each), and two
 * streamed: A's mark line, read right after its header (nothing
 * covered: the whole 10 ns), and A's second line, read 8 words after
 * its first (8 x word_ns covered). */
static void test_stream_cover(void) {
  struct builder b;
  rooted(&b, 128, SNAP_SCANNED);
  struct predict_profile prof;
  predict_profile_default(&prof);
  prof.read_miss_ns = prof.read_remote_miss_ns = 100;
  prof.read_stream_ns = 10;
  prof.object_ns = 5;
  prof.word_ns = 1;
  struct graph_misses m;
  CHECK(graph_misses(&b.s, &prof, false, &m), "misses");
  CHECK(NEAR(m.misses, 5) && NEAR(m.streamed, 2) && NEAR(m.mark_streamed, 1), "misses %f, streamed %f",
        m.misses, m.streamed);
  /* A's second line: 1 - 8/10 of the stream's time exposed. */
  CHECK(NEAR(m.stream_exposed, 1.2) && NEAR(m.mark_stream_exposed, 1), "exposed %f, marks %f",
        m.stream_exposed, m.mark_stream_exposed);
  CHECK(NEAR(m.object_dependent, 2) && NEAR(m.mark_dependent, 1), "dependent %f %f", m.object_dependent,
        m.mark_dependent);
  /* M_1 = (3 x 100 + 0.2 x 10 + 1 x 10) / 5. */
  double m1 = graph_miss_ns(&m, &prof, 0, 0, false);
  CHECK(NEAR(m1, 312.0 / 5), "M1 %f", m1);
  graph_lines_free(&m.lines);
  /* 2 ns a word: 16 ns of scanning covers the whole 10. */
  prof.word_ns = 2;
  CHECK(graph_misses(&b.s, &prof, false, &m), "misses");
  CHECK(NEAR(m.stream_exposed, 1) && NEAR(m.streamed, 2), "covered: %f", m.stream_exposed);
  graph_lines_free(&m.lines);
  /* No stream time (the thesis's profiles): no prefetcher, nothing covered. */
  prof.read_stream_ns = 0;
  CHECK(graph_misses(&b.s, &prof, false, &m), "misses");
  CHECK(NEAR(m.stream_exposed, 2), "no prefetcher: %f", m.stream_exposed);
  graph_lines_free(&m.lines);
  snapshot_free(&b.s);
}

static void test_numa_forecast(void) {
  struct graph_misses g = {.misses = 10, .mark_misses = 2, .object_dependent = 8, .mark_dependent = 2};
  struct predict_profile prof;
  predict_profile_default(&prof);
  prof.nodes = 2;
  prof.interleave = false;
  prof.read_miss_ns = 100;
  prof.read_remote_miss_ns = 300;
  prof.read_occupancy_ns = 20;
  prof.join_ns = prof.prewake_join_ns = prof.marker_ns = prof.steal_ns = 0;
  prof.cache_cpus = 1;
  const double shares[2] = {3, 1};
  struct predict_input in = {.t1_ns = 1000, .misses = 10};
  /* Without BMB the mark bytes are on node 0 with most of the heap:
   * V = ((8 x 3/4 + 2) / 10, 8 x 1/4 / 10) = (0.8, 0.2); half the
   * accesses remote: M_1 = 200. */
  graph_numa_input(&g, &prof, shares, -1, false, false, &in);
  CHECK(in.nodes == 2 && NEAR(in.node_share[0], 0.8) && NEAR(in.node_share[1], 0.2), "V %f %f",
        in.node_share[0], in.node_share[1]);
  CHECK(NEAR(in.miss_ns, 200), "M1 %f", in.miss_ns);
  /* P = 2: T = 500 + 5 (200 + sum_j (1/2) V_j 20 rho_j / (1 - rho_j)),
   * rho_j = 20 V_j 10 / T (a miss waits behind the other marker's
   * requests: half the queue), solved apart: 1505.03129. */
  struct predict_point pt;
  predict_at(&prof, &in, 2, 0, &pt);
  CHECK(pt.time_ns > 1505.0312 && pt.time_ns < 1505.0314, "T %f", pt.time_ns);
  /* BMB spreads the mark bytes: V = (0.7, 0.3), T = 1504.21499. */
  graph_numa_input(&g, &prof, shares, -1, true, false, &in);
  CHECK(NEAR(in.node_share[0], 0.7) && NEAR(in.node_share[1], 0.3), "BMB V %f", in.node_share[0]);
  predict_at(&prof, &in, 2, 0, &pt);
  CHECK(pt.time_ns > 1504.2149 && pt.time_ns < 1504.2151, "BMB T %f", pt.time_ns);
  /* A quarter of the object accesses remote (measured): M_1 =
   * (8 x 150 + 2 x 200) / 10 = 160; without BMB T = 1305.90110. */
  graph_numa_input(&g, &prof, shares, 0.25, false, false, &in);
  CHECK(NEAR(in.miss_ns, 160), "remote 0.25: M1 %f", in.miss_ns);
  predict_at(&prof, &in, 2, 0, &pt);
  CHECK(pt.time_ns > 1305.9010 && pt.time_ns < 1305.9012, "T %f", pt.time_ns);
}

static void test_read_back(void) {
  struct builder b;
  init(&b);
  uint32_t root = object(&b, 0x1000, 24, SNAP_ROOT);
  uint32_t x = object(&b, 0x10000, 48, SNAP_SCANNED), y = object(&b, 0x10030, 16, SNAP_ATOMIC);
  edge(&b, root, 2, x);
  edge(&b, x, 0, y);
  edge(&b, x, 5, x);
  b.s.objects[x].node = 3;
  b.s.header.gc_no = 7;
  b.s.wake = (struct snapshot_wake){.lead_ns = 12345, .runnable = 3, .cpus = 16};
  char path[] = "/tmp/sgc-snapshot-XXXXXX";
  int fd = mkstemp(path);
  CHECK(fd >= 0, "temporary file");
  close(fd);
  CHECK(snapshot_write(path, &b.s), "write");
  struct snapshot r;
  char error[300];
  CHECK(snapshot_read(path, &r, error, sizeof error), "read: %s", error);
  CHECK(!memcmp(&r.header, &b.s.header, sizeof r.header), "header");
  CHECK(!memcmp(r.objects, b.s.objects, 3 * sizeof *r.objects), "objects");
  CHECK(!memcmp(r.edges, b.s.edges, 3 * sizeof *r.edges), "edges");
  CHECK(!memcmp(&r.wake, &b.s.wake, sizeof r.wake), "wake: lead %llu", (unsigned long long)r.wake.lead_ns);
  snapshot_free(&r);
  /* Version 1, written before the wake block: the objects follow the
   * header, and the wake reads as unknown. */
  FILE *f = fopen(path, "wb");
  struct snapshot_header v1 = b.s.header;
  v1.version = 1;
  CHECK(f && fwrite(&v1, sizeof v1, 1, f) == 1 && fwrite(b.s.objects, sizeof *b.s.objects, 3, f) == 3 &&
            fwrite(b.s.edges, sizeof *b.s.edges, 3, f) == 3 && fclose(f) == 0,
        "write version 1");
  CHECK(snapshot_read(path, &r, error, sizeof error), "read version 1: %s", error);
  CHECK(r.header.version == 1 && r.wake.cpus == 0 && r.wake.lead_ns == 0 &&
            !memcmp(r.objects, b.s.objects, 3 * sizeof *r.objects),
        "version 1's objects, no wake");
  snapshot_free(&r);
  /* An object whose edges run past the table is refused, even where
   * first_edge + edge_count wraps around. */
  b.s.objects[x].first_edge = UINT64_MAX - 1;
  CHECK(snapshot_write(path, &b.s), "write");
  CHECK(!snapshot_read(path, &r, error, sizeof error) && strstr(error, "object record"), "bad range");
  b.s.objects[x].first_edge = 1;
  /* An edge to no object is refused. */
  b.s.edges[1].target = 9;
  CHECK(snapshot_write(path, &b.s), "write");
  CHECK(!snapshot_read(path, &r, error, sizeof error) && strstr(error, "edge"), "bad edge");
  unlink(path);
  snapshot_free(&b.s);
}

/* Handoffs (graph_handoffs): an array of 64 words split in two pieces
 * of 256 bytes, pointing to 64 objects of 16 bytes whose mark bytes share
 * one line.  The second piece's first pointer reuses the line the first
 * piece used one mark-byte access before: one reuse at distance 1 of 65
 * accesses (the root's pointer marks the array). */
static void test_handoffs(void) {
  for (uint64_t d = 1; d < 100000; d = d * 3 + 1) {
    double back = graph_handoff_distance(graph_handoff_bucket(d));
    CHECK(back > 0.87 * (double)d && back < 1.13 * (double)d, "distance %llu -> %f",
          (unsigned long long)d, back);
  }
  CHECK(graph_handoff_bucket(1) == 1 && graph_handoff_bucket(8) == 12 && graph_handoff_bucket(11) == 13,
        "buckets %u %u", graph_handoff_bucket(8), graph_handoff_bucket(11));
  struct builder b;
  uint32_t array = rooted(&b, 512, SNAP_SCANNED);
  for (uint32_t k = 0; k < 64; k++) edge(&b, array, k, object(&b, 0x200000 + 16 * k, 16, SNAP_ATOMIC));
  struct predict_profile prof;
  predict_profile_default(&prof);
  struct graph_misses m;
  CHECK(graph_misses(&b.s, &prof, GRAPH_COLD, &m), "misses");
  uint64_t reuses = 0;
  for (unsigned k = 0; k < GRAPH_HANDOFF_BUCKETS; k++) reuses += m.mark_reuses[k];
  CHECK(m.mark_accesses == 65 && reuses == 1 && m.mark_reuses[1] == 1, "%llu accesses, %llu reuses",
        (unsigned long long)m.mark_accesses, (unsigned long long)reuses);
  /* 13 cuts: chance 13 x 1 / 65 = 0.2 that one falls between, then half
   * the time on another of 2 markers; past 65 cuts, always cut. */
  CHECK(NEAR(graph_handoffs(&m, 13, 2), 0.1), "13 cuts %f", graph_handoffs(&m, 13, 2));
  CHECK(NEAR(graph_handoffs(&m, 100, 2), 0.5) && NEAR(graph_handoffs(&m, 100, 4), 0.75),
        "always cut %f", graph_handoffs(&m, 100, 4));
  CHECK(graph_handoffs(&m, 100, 1) == 0, "one marker");
  graph_lines_free(&m.lines);
  snapshot_free(&b.s);
  /* Pieces end where mark.c halves, the middle rounded down to a word:
   * 1000 bytes at 256 are 248 + 248 + 248 + 256, so words 30 and 31 lie
   * in two pieces (equal quarters of 250 bytes would put both in the
   * first), and their pointers into one line of mark bytes make a reuse. */
  array = rooted(&b, 1000, SNAP_SCANNED);
  edge(&b, array, 30, object(&b, 0x200000, 16, SNAP_ATOMIC));
  edge(&b, array, 31, object(&b, 0x200010, 16, SNAP_ATOMIC));
  CHECK(graph_misses(&b.s, &prof, GRAPH_COLD, &m), "misses, 1000 bytes");
  CHECK(m.mark_accesses == 3 && m.mark_reuses[1] == 1, "piece boundary: %llu accesses, %llu reuses",
        (unsigned long long)m.mark_accesses, (unsigned long long)m.mark_reuses[1]);
  /* Unsplit, the array is one piece: nothing is reused by another. */
  graph_lines_free(&m.lines);
  b.s.header.split_bytes = 0;
  CHECK(graph_misses(&b.s, &prof, GRAPH_COLD, &m), "misses unsplit");
  CHECK(m.mark_accesses == 3 && graph_handoffs(&m, 100, 2) == 0, "unsplit %f",
        graph_handoffs(&m, 100, 2));
  graph_lines_free(&m.lines);
  snapshot_free(&b.s);
}

int main(void) {
  test_list();
  test_wide_tree();
  test_big_array();
  test_cache();
  test_serial_misses();
  test_overlap_formula();
  test_tlb_fit();
  test_repeat_edges();
  test_window_misses();
  test_stream_cover();
  test_numa_forecast();
  test_read_back();
  test_handoffs();
  return unit_finish();
}
