/* sgc-predict SNAPSHOT PROFILE: the slow predictor (thesis §4.3).  Prints
 * the predicted mark time and speed-up for P markers, with the curves
 * that leave out contention (M_P = M_1) or the steals' extra misses
 * (Q_P = Q_1), and the term that limits each P (docs/prediction.md). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "graph.h"
#include "mark/predict_model.h"
#include "snapshot_read.h"

static void usage(void) {
  fprintf(stderr,
          "usage: sgc-predict [-a] [-j] [-H] [-J] [-w|-W] [-x] [-m MAX] [-p P,P,...] [-s SPLIT] SNAPSHOT PROFILE\n"
          "  -a  every P from 1 to MAX (default: 1-16, then steps to MAX)\n"
          "  -j  one JSON object instead of the table\n"
          "  -w  a warm cache: the live objects touched in address order before the mark\n"
          "  -W  a warm cache: the same mark run once before (a repeated collection)\n"
          "  -H  leave out the handoffs: lines of mark bytes that markers taking\n"
          "      different pieces pass between their caches\n"
          "  -J  leave out the snapshot's wake (lead, idle CPUs): every GC thread\n"
          "      pre-woken joins the profile's prewake_join_ns into the mark\n"
          "  -x  marks set by an atomic exchange (SGC_MARK_SET=exchange): mark-byte\n"
          "      misses cost read-modify-writes\n"
          "  -m  the largest P (default 256)\n"
          "  -p  exactly these P\n"
          "  -s  split bytes (default: the snapshot's SGC_SPLIT_BYTES)\n"
          "NUMA forecast (docs/numa.md): the profile's latencies on a machine of\n"
          "  -N  NODES memory nodes, each a queue of the profile's occupancy, with\n"
          "  -V  the heap's accesses per node, V0,V1,... (default: even)\n"
          "  -r  the GC threads' share of remote object accesses (default (N-1)/N)\n"
          "  -B  BMB: mark bytes spread evenly over the nodes (default: all on the\n"
          "      node of the largest share, where the page headers were first touched)\n");
  exit(2);
}

static bool read_profile(const char *path, struct predict_profile *prof) {
  predict_profile_default(prof);
  FILE *f = fopen(path, "r");
  if (!f) {
    fprintf(stderr, "sgc-predict: cannot open profile %s\n", path);
    return false;
  }
  static char text[65536];
  size_t n = fread(text, 1, sizeof text - 1, f);
  fclose(f);
  text[n] = 0;
  char error[200];
  if (!predict_profile_parse(text, prof, error, sizeof error)) {
    fprintf(stderr, "sgc-predict: profile %s: %s\n", path, error);
    return false;
  }
  return true;
}

int main(int argc, char **argv) {
  bool all = false, json = false, rmw = false, bmb = false, no_wake = false, no_handoffs = false;
  int warm = GRAPH_COLD;
  unsigned forecast_nodes = 0, shares_given = 0;
  double shares[PREDICT_MAX_NODES], remote_given = -1;
  unsigned max = 256, list[512], listed = 0;
  long split = -1;
  int opt;
  while ((opt = getopt(argc, argv, "ajHJwWxBm:p:s:N:V:r:")) != -1) {
    switch (opt) {
    case 'B': bmb = true; break;
    case 'N': forecast_nodes = (unsigned)strtoul(optarg, NULL, 10); break;
    case 'r': remote_given = strtod(optarg, NULL); break;
    case 'V':
      for (char *t = strtok(optarg, ","); t && shares_given < PREDICT_MAX_NODES; t = strtok(NULL, ","))
        shares[shares_given++] = strtod(t, NULL);
      break;
    case 'a': all = true; break;
    case 'j': json = true; break;
    case 'H': no_handoffs = true; break;
    case 'J': no_wake = true; break;
    case 'x': rmw = true; break;
    case 'w': warm = GRAPH_WARM; break;
    case 'W': warm = GRAPH_REPEAT; break;
    case 'm': max = (unsigned)strtoul(optarg, NULL, 10); break;
    case 's': split = strtol(optarg, NULL, 10); break;
    case 'p':
      for (char *t = strtok(optarg, ","); t && listed < 512; t = strtok(NULL, ","))
        list[listed++] = (unsigned)strtoul(t, NULL, 10);
      break;
    default: usage();
    }
  }
  if (argc - optind != 2 || max < 1 || max > 4096 || forecast_nodes > PREDICT_MAX_NODES ||
      remote_given > 1 || (shares_given && shares_given != forecast_nodes))
    usage();
  struct snapshot s;
  char error[300];
  if (!snapshot_read(argv[optind], &s, error, sizeof error)) {
    fprintf(stderr, "sgc-predict: %s\n", error);
    return 1;
  }
  struct predict_profile prof;
  if (!read_profile(argv[optind + 1], &prof)) return 1;
  uint64_t split_bytes = split >= 0 ? (uint64_t)split : s.header.split_bytes;

  struct graph_work work;
  struct graph_misses misses;
  if (!graph_work(&s, prof.object_ns, prof.word_ns, split_bytes, &work) ||
      !graph_misses(&s, &prof, warm, &misses)) {
    fprintf(stderr, "sgc-predict: out of memory\n");
    return 1;
  }
  /* Work beyond graph_work's pops and words, the same alone or shared. */
  double beyond = (double)work.repeat_edges * prof.edge_ns +
                  (double)misses.page_walks * prof.page_ns + misses.push_ns;
  struct predict_input in = {
      .t1_ns = work.t1_ns + beyond,
      .t1_lone_ns = work.t1_lone_ns + beyond,
      .tinf_ns = work.tinf_ns,
      .misses = misses.misses,
      .live_lines = misses.live_lines,
      .rmw_share = rmw && misses.misses > 0 ? misses.mark_misses / misses.misses : 0,
      .nodes = misses.nodes,
      .wake_known = s.wake.cpus > 0 && !no_wake,
      .lead_ns = (double)s.wake.lead_ns,
      .idle_cpus = s.wake.cpus > s.wake.runnable ? s.wake.cpus - s.wake.runnable : 0,
  };
  memcpy(in.node_share, misses.node_share, sizeof in.node_share);
  in.extra_misses = graph_extra_misses;
  in.lines = &misses.lines;
  if (!no_handoffs) {
    in.handoffs = graph_handoffs;
    in.handoff_data = &misses;
  }
  /* Remote accesses: (n - 1)/n of them on n nodes, as with the pages
   * spread evenly and the markers scanning whatever they find. */
  unsigned nodes = prof.nodes ? prof.nodes : 1;
  double remote = (double)(nodes - 1) / nodes;
  in.miss_ns = graph_miss_ns(&misses, &prof, remote, remote, rmw);
  if (forecast_nodes) {
    prof.nodes = forecast_nodes;
    prof.interleave = false;
    graph_numa_input(&misses, &prof, shares_given ? shares : NULL, remote_given, bmb, rmw, &in);
  }
  uint64_t live = 0;
  for (uint64_t i = s.header.roots; i < s.header.objects; i++) live += s.objects[i].bytes;

  if (!listed) {
    static const unsigned steps[] = {20, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 1024, 2048, 4096};
    for (unsigned p = 1; p <= max && p <= (all ? max : 16); p++) list[listed++] = p;
    for (unsigned k = 0; !all && k < sizeof steps / sizeof *steps; k++)
      if (steps[k] <= max) list[listed++] = steps[k];
  }
  struct predict_point one;
  predict_at(&prof, &in, 1, 0, &one);
  if (json) {
    printf("{\"snapshot\":\"%s\",\"profile\":\"%s\",\"gc_no\":%u,\"objects\":%llu,"
           "\"live_bytes\":%llu,\"t1_ns\":%.1f,\"t1_lone_ns\":%.1f,\"tinf_ns\":%.1f,\"misses\":%.0f,"
           "\"lead_ns\":%.0f,\"idle_cpus\":%d,\"page_walks\":%llu,\"live_lines\":%.1f,\"mlp\":%.3f,\"miss_ns\":%.3f,\"tlb_ns\":%.0f,\"windowed\":%llu,\"push_ns\":%.0f,\"points\":[",
           argv[optind], prof.name, s.header.gc_no,
           (unsigned long long)(s.header.objects - s.header.roots), (unsigned long long)live,
           in.t1_ns, in.t1_lone_ns, in.tinf_ns, in.misses, in.wake_known ? in.lead_ns : -1,
           in.wake_known ? (int)in.idle_cpus : -1, (unsigned long long)misses.page_walks,
           in.live_lines, graph_mlp(&prof), in.miss_ns, misses.tlb_ns,
           (unsigned long long)misses.windowed, misses.push_ns);
  } else {
    printf("snapshot %s (collection %u): %llu objects, %llu root ranges, %llu edges, %.3f MB live\n",
           argv[optind], s.header.gc_no, (unsigned long long)(s.header.objects - s.header.roots),
           (unsigned long long)s.header.roots, (unsigned long long)s.header.edges, live / 1e6);
    printf("profile %s; split %llu bytes\n", prof.name, (unsigned long long)split_bytes);
    if (in.wake_known)
      printf("GC threads pre-woken %.1f us before the mark, %u of %u CPUs idle then\n",
             in.lead_ns / 1e3, in.idle_cpus, s.wake.cpus);
    printf("T1 %.3f ms (%llu pieces, %llu words; one marker alone: %.3f ms, %llu pieces)  Tinf %.3f ms  "
           "T1/Tinf %.1f\n", in.t1_ns / 1e6, (unsigned long long)work.pieces,
           (unsigned long long)work.scanned_words, in.t1_lone_ns / 1e6,
           (unsigned long long)work.lone_pieces, in.tinf_ns / 1e6,
           in.tinf_ns > 0 ? in.t1_ns / in.tinf_ns : 0);
    printf("Q1 %.0f misses of %llu accesses (%.0f on mark bytes)  L %.1f lines  %llu page-map walks\n",
           in.misses, (unsigned long long)misses.accesses, misses.mark_misses, in.live_lines,
           (unsigned long long)misses.page_walks);
    printf("M1 %.1f ns a miss (MLP %.1f; %.0f misses streamed; %.3f ms translating cached and "
           "streamed lines)\n", in.miss_ns, graph_mlp(&prof), misses.streamed, misses.tlb_ns / 1e6);
    uint64_t reuses = 0;
    for (unsigned b = 0; b < GRAPH_HANDOFF_BUCKETS; b++) reuses += misses.mark_reuses[b];
    printf("mark bytes: %llu accesses, %llu for another piece than the line's last%s\n",
           (unsigned long long)misses.mark_accesses, (unsigned long long)reuses,
           no_handoffs ? " (handoffs left out)" : "");
    printf("pushes: %llu objects through the prefetch window, %.3f ms of T1 (beside the "
           "overlapped misses)\n", (unsigned long long)misses.windowed, misses.push_ns / 1e6);
    printf("%5s %11s %8s %12s %12s %9s %12s %9s  %s\n", "P", "mark ms", "speedup", "no-content.",
           "no-extra", "M_P ns", "Q_P", "handoffs", "largest term");
  }
  struct predict_point last = one;
  for (unsigned k = 0; k < listed; k++) {
    struct predict_point pt, free_pt, same_pt;
    predict_at(&prof, &in, list[k], 0, &pt);
    predict_at(&prof, &in, list[k], PREDICT_NO_CONTENTION, &free_pt);
    predict_at(&prof, &in, list[k], PREDICT_NO_EXTRA_MISSES, &same_pt);
    last = pt;
    if (json)
      printf("%s{\"p\":%u,\"mark_ns\":%.1f,\"speedup\":%.4f,\"speedup_no_contention\":%.4f,"
             "\"speedup_no_extra_misses\":%.4f,\"miss_ns\":%.2f,\"misses\":%.0f,\"handoffs\":%.0f,\"limit\":\"%s\"}",
             k ? "," : "", pt.p, pt.time_ns, one.time_ns / pt.time_ns,
             one.time_ns / free_pt.time_ns, one.time_ns / same_pt.time_ns, pt.miss_ns, pt.misses,
             pt.handoffs,
             predict_term_names[pt.limit]);
    else
      printf("%5u %11.4f %8.2f %12.2f %12.2f %9.1f %12.0f %9.0f  %s\n", pt.p, pt.time_ns / 1e6,
             one.time_ns / pt.time_ns, one.time_ns / free_pt.time_ns,
             one.time_ns / same_pt.time_ns, pt.miss_ns, pt.misses, pt.handoffs,
             predict_term_names[pt.limit]);
  }
  /* What keeps the speed-up from growing: the largest term that does not
   * shrink as 1/P (work and misses do). */
  enum predict_term limit = TERM_CRITICAL;
  for (int t = TERM_CRITICAL; t < TERM_COUNT; t++)
    if (t != TERM_MISSES && last.term_ns[t] > last.term_ns[limit]) limit = (enum predict_term)t;
  bool limited = last.term_ns[limit] > 0.1 * last.time_ns;
  const char *name = limited ? predict_term_names[limit] : "nothing";
  if (json) printf("],\"limit\":\"%s\"}\n", name);
  else if (limited)
    printf("at P=%u the speed-up is limited by %s (%.0f%% of the time)\n", last.p, name,
           100 * last.term_ns[limit] / last.time_ns);
  else printf("at P=%u nothing but the work and misses, which shrink as 1/P, is over 10%% of the time\n",
              last.p);
  graph_lines_free(&misses.lines);
  snapshot_free(&s);
  return 0;
}
