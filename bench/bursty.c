/*
 * bursty: many mostly-sleeping threads that wake to allocate bursts
 * (the VolanoMark setting of papers/001, where per-CPU allocation buffers
 * beat per-thread ones).
 *
 * -t (200, up to 1000 or more) threads are split into chat "rooms" of -g
 * (20) members.  In each room one member at a time is awake: it allocates
 * a burst of -b (100) short-lived objects of 16..256 bytes (a message made
 * of chunks plus scratch objects), checks them, posts the message into the
 * room's shared history ring (the last -H (16) messages survive there,
 * older ones become garbage), reads the room's latest messages back, then
 * wakes the next member through its condition variable and goes back to
 * sleep.  Every member takes -r (50) turns; -z adds a think time in
 * microseconds (nanosleep) after each turn.  Most threads sleep at any
 * moment, but every one of them owns a thread-local allocation state.
 *
 * Metric: mops = million allocations per second over all threads.
 * Check: every message read from a room's history carries a valid checksum
 * and the right room number; each room has seen exactly members x turns
 * messages; the total allocation count is known.
 */
#include "bench_common.h"

typedef struct Chunk {
  struct Chunk *next;
  uint32_t len;
  uint32_t sum;
  unsigned char data[]; /* len bytes */
} Chunk;

typedef struct Msg {
  Chunk *chunks;
  int room, sender, seq;
  uint64_t check;
} Msg;

#define MAXHIST 256

typedef struct Room {
  pthread_mutex_t lock;
  int turn;     /* member index whose turn it is */
  long posted;  /* messages posted */
  int hist_n, hist_pos;
  Msg *hist[MAXHIST];
} Room;

typedef struct Member {
  pthread_cond_t cond;
  int id, room, index;
  long allocs;
  int failed;
} Member;

static int nthreads = 200, room_size = 20, burst = 100, turns = 50, hist_len = 16;
static long think_us = 0;
static int nrooms;
static Room **rooms;      /* array (GC object) of GC-allocated rooms */
static Member *members;   /* calloc'ed; no GC pointers inside */
static int *room_count;   /* members per room */

static uint64_t msg_check(const Msg *m) {
  uint64_t h = bench_mix((uint64_t)m->room, (uint64_t)m->sender);
  h = bench_mix(h, (uint64_t)m->seq);
  int n = 0;
  for (const Chunk *c = m->chunks; c; c = c->next, n++) {
    uint32_t s = 0;
    for (uint32_t i = 0; i < c->len; i++) s = s * 31 + c->data[i];
    if (s != c->sum) return 0; /* corrupted chunk */
    h = bench_mix(h, s);
  }
  return bench_mix(h, (uint64_t)n);
}

static void *member(void *arg) {
  Member *me = (Member *)arg;
  Room *room = rooms[me->room];
  int nmem = room_count[me->room];
  bench_rng rng = {(uint64_t)me->id * 7919 + 1};
  for (int t = 0; t < turns; t++) {
    pthread_mutex_lock(&room->lock);
    while (room->turn != me->index) pthread_cond_wait(&me->cond, &room->lock);
    pthread_mutex_unlock(&room->lock);

    /* the burst: a message of chunks plus scratch garbage */
    Msg *m = (Msg *)bench_xmalloc(sizeof(Msg));
    m->room = me->room;
    m->sender = me->id;
    m->seq = t;
    me->allocs++;
    Chunk *head = NULL;
    int nchunks = burst / 4 > 0 ? burst / 4 : 1;
    for (int k = 1; k < burst; k++) {
      /* object sizes 16..256 bytes */
      uint32_t len = 16 + bench_rng_below(&rng, 241) - (uint32_t)sizeof(Chunk);
      Chunk *c = (Chunk *)bench_xmalloc(sizeof(Chunk) + len);
      me->allocs++;
      c->len = len;
      uint32_t s = 0;
      for (uint32_t i = 0; i < len; i++) {
        c->data[i] = (unsigned char)bench_rng_next(&rng);
        s = s * 31 + c->data[i];
      }
      c->sum = s;
      if (k <= nchunks) { /* part of the message */
        c->next = head;
        head = c;
      } else { /* scratch: dropped at once */
        c->next = NULL;
      }
    }
    m->chunks = head;
    m->check = msg_check(m);
    if (m->check == 0) {
      bench_fail("thread %d: freshly built message is corrupt", me->id);
      me->failed = 1;
    }

    /* post it and read the history back */
    pthread_mutex_lock(&room->lock);
    room->hist[room->hist_pos] = m;
    room->hist_pos = (room->hist_pos + 1) % hist_len;
    if (room->hist_n < hist_len) room->hist_n++;
    room->posted++;
    for (int k = 0; k < room->hist_n; k++) {
      const Msg *h = room->hist[k];
      if (!h || h->room != me->room || msg_check(h) != h->check) {
        if (!me->failed) bench_fail("room %d: corrupt message in history", me->room);
        me->failed = 1;
      }
    }
    /* pass the turn and wake the next member (members of a room have
     * consecutive ids) */
    room->turn = (room->turn + 1) % nmem;
    pthread_cond_signal(&members[me->id - me->index + room->turn].cond);
    pthread_mutex_unlock(&room->lock);

    if (think_us > 0) {
      struct timespec ts = {think_us / 1000000, (think_us % 1000000) * 1000};
      nanosleep(&ts, NULL);
    }
  }
  return NULL;
}

int main(int argc, char **argv) {
  int opt;
  while ((opt = getopt(argc, argv, "t:g:b:r:H:z:h")) != -1) {
    switch (opt) {
      case 't': nthreads = (int)bench_arg_long("-t", optarg, 1, 100000); break;
      case 'g': room_size = (int)bench_arg_long("-g", optarg, 1, 100000); break;
      case 'b': burst = (int)bench_arg_long("-b", optarg, 1, 1 << 24); break;
      case 'r': turns = (int)bench_arg_long("-r", optarg, 1, 1 << 24); break;
      case 'H': hist_len = (int)bench_arg_long("-H", optarg, 1, MAXHIST); break;
      case 'z': think_us = bench_arg_long("-z", optarg, 0, 10000000); break;
      default:
        BENCH_USAGE_EXIT(
            "usage: bursty [-t threads] [-g room_size] [-b burst] [-r turns] [-H history] [-z think_us]\n");
    }
  }
  GC_INIT();
  nrooms = (nthreads + room_size - 1) / room_size;
  rooms = (Room **)bench_xmalloc(sizeof(Room *) * (size_t)nrooms);
  room_count = (int *)calloc((size_t)nrooms, sizeof(int));
  members = (Member *)calloc((size_t)nthreads, sizeof(Member));
  for (int r = 0; r < nrooms; r++) {
    Room *room = (Room *)bench_xmalloc(sizeof(Room));
    memset(room, 0, sizeof *room);
    pthread_mutex_init(&room->lock, NULL);
    rooms[r] = room;
  }
  for (int i = 0; i < nthreads; i++) {
    members[i].id = i;
    members[i].room = i / room_size;
    members[i].index = i % room_size;
    room_count[i / room_size]++;
    pthread_cond_init(&members[i].cond, NULL);
  }

  /* small stacks: hundreds of threads */
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 256 * 1024);
  pthread_t *tids = (pthread_t *)calloc((size_t)(unsigned)nthreads, sizeof(pthread_t));
  double t0 = bench_now();
  for (int i = 0; i < nthreads; i++) {
    int e = bench_thread_create(&tids[i], &attr, member, &members[i]);
    if (e) {
      fprintf(stderr, "bursty: thread %d: %s\n", i, strerror(e));
      exit(3);
    }
  }
  for (int i = 0; i < nthreads; i++) bench_thread_join(tids[i], NULL);
  double wall = bench_now() - t0;

  long allocs = 0;
  for (int i = 0; i < nthreads; i++) allocs += members[i].allocs;
  long want = (long)nthreads * turns * burst;
  if (allocs != want) bench_fail("allocated %ld objects, expected %ld", allocs, want);
  for (int r = 0; r < nrooms; r++) {
    Room *room = rooms[r];
    if (room->posted != (long)room_count[r] * turns)
      bench_fail("room %d: %ld messages posted, expected %ld", r, room->posted,
                 (long)room_count[r] * turns);
    for (int k = 0; k < room->hist_n; k++) {
      const Msg *h = room->hist[k];
      if (!h || h->room != r || msg_check(h) != h->check) bench_fail("room %d: corrupt history", r);
    }
  }

  bench_result_begin("bursty", nthreads, wall);
  bench_kv("rooms", "%d", nrooms);
  bench_kv("burst", "%d", burst);
  bench_kv("turns", "%d", turns);
  bench_kv("allocs", "%ld", allocs);
  bench_kv("mops", "%.3f", (double)allocs / wall / 1e6);
  bench_kv("allocs_per_s", "%.0f", (double)allocs / wall);
  free(tids);
  return bench_result_end();
}
