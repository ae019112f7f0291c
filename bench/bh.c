/*
 * bh: Barnes-Hut N-body simulation (thesis §1.1, §3.5: BH-st and BH-pt).
 *
 * -n bodies (default 16384) start uniformly in the unit sphere; -s (10) time
 * steps of a symplectic Euler integrator with Barnes-Hut forces (opening
 * criterion size/distance < -a theta (0.6), Plummer softening).  The bodies
 * are referenced from ONE large collector-scanned array (the object that
 * motivates the thesis's split-large-object optimisation).
 *
 * Every step: (1) thread 0 computes the bounding cube and creates the top
 * three tree levels (1+8+64 cells); (2) the octree is built below them:
 *   -m st : by thread 0 alone (BH-st, sequential tree construction),
 *   -m pt : by all threads, the 512 level-3 subtrees dealt round-robin
 *           (BH-pt, parallel tree construction);
 * (3) centres of mass, per subtree then the top levels; (4) all threads
 * compute forces for their block of bodies; (5) all threads move their
 * bodies.  Tree cells, their centre-of-mass vectors and one leaf record per
 * body per step are GC-allocated and become garbage at the next step; only
 * the tree phase allocates, as in the thesis.
 *
 * The octree with one body per leaf does not depend on insertion order and
 * every reduction is done in a fixed order, so positions are bit-identical
 * for any thread count and for st/pt: the reported hash can be compared
 * across runs and implementations.
 *
 * Check (every step): the tree holds exactly n leaves, each body once; the
 * root's mass equals the total mass and its centre of mass equals the one
 * computed directly from the body array; for a sample of -c (16) bodies
 * the tree force is compared with the exact direct sum (aggregate relative
 * error must stay below 5%).  At the end, total momentum must remain close
 * to its initial value (zero).
 */
#include <math.h>
#include <stdatomic.h>

#include "bench_common.h"

enum { K_BODY = 1, K_LEAF = 2, K_CELL = 3 };

typedef struct Body {
  int kind;
  int index;
  double mass;
  double pos[3], vel[3], acc[3];
} Body;

typedef struct Leaf {
  int kind;
  int index;
  double mass;
  double pos[3]; /* snapshot of the body's position for this step */
  Body *body;
} Leaf;

typedef struct Vec3 {
  double v[3];
} Vec3;

typedef struct Cell {
  int kind;
  int nleaves;
  double mass;
  double size;   /* edge length of the cube */
  Vec3 *com;     /* centre of mass, separately allocated */
  void *child[8];
} Cell;

static long nbodies = 16384;
static int nsteps = 10, nthreads = 1, parallel_tree = 0, nsample = 16;
static double theta = 0.6, dt = 0.005, eps2 = 0.02 * 0.02;

/* Shared state; GC pointers live in static data (a root) or in GC objects. */
static Body **bodies;           /* the large array */
static Cell *root;
static Cell *level2[64];        /* the 64 cells of level 2 */
static double l2_centre[64][3]; /* their geometry */
static double l2_half;
static double root_centre[3], root_half;
static pthread_barrier_t barrier;

static double err_sum, ref_sum; /* sampled force error, accumulated */
static _Atomic long allocs_atomic; /* GC allocations in tree phases */

static void *gc_alloc(size_t n) {
  return bench_xmalloc(n);
}

static Cell *new_cell(double size) {
  Cell *c = (Cell *)gc_alloc(sizeof(Cell));
  c->kind = K_CELL;
  c->nleaves = 0;
  c->mass = 0;
  c->size = size;
  for (int o = 0; o < 8; o++) c->child[o] = NULL;
  c->com = (Vec3 *)gc_alloc(sizeof(Vec3));
  c->com->v[0] = c->com->v[1] = c->com->v[2] = 0;
  return c;
}

static int octant(const double *p, const double *centre) {
  return (p[0] >= centre[0]) | ((p[1] >= centre[1]) << 1) | ((p[2] >= centre[2]) << 2);
}

static void child_centre(const double *centre, double half, int o, double *out) {
  double q = half * 0.5;
  out[0] = centre[0] + ((o & 1) ? q : -q);
  out[1] = centre[1] + ((o & 2) ? q : -q);
  out[2] = centre[2] + ((o & 4) ? q : -q);
}

/* Insert a leaf below `cell` (whose cube has the given centre and half
 * edge).  Returns the number of GC allocations made (2 per new cell). */
static long insert(Cell *cell, const double *centre0, double half, Leaf *leaf) {
  long made = 0;
  double centre[3] = {centre0[0], centre0[1], centre0[2]};
  for (int depth = 0;; depth++) {
    int o = octant(leaf->pos, centre);
    void *c = cell->child[o];
    if (c == NULL) {
      cell->child[o] = leaf;
      return made;
    }
    double cc[3];
    child_centre(centre, half, o, cc);
    if (*(int *)c == K_LEAF) {
      if (depth > 200) {
        fprintf(stderr, "bh: coincident bodies, cannot build tree\n");
        exit(3);
      }
      Leaf *old = (Leaf *)c;
      Cell *n = new_cell(half);
      made += 2;
      n->child[octant(old->pos, cc)] = old;
      cell->child[o] = n;
      cell = n;
    } else {
      cell = (Cell *)c;
    }
    memcpy(centre, cc, sizeof centre);
    half *= 0.5;
  }
}

/* Centre of mass of a subtree (recursive, children in order 0..7). */
static void com_node(void *node, double *mass, double *m_pos, int *count) {
  if (node == NULL) {
    *mass = 0;
    m_pos[0] = m_pos[1] = m_pos[2] = 0;
    *count = 0;
    return;
  }
  if (*(int *)node == K_LEAF) {
    Leaf *l = (Leaf *)node;
    *mass = l->mass;
    m_pos[0] = l->mass * l->pos[0];
    m_pos[1] = l->mass * l->pos[1];
    m_pos[2] = l->mass * l->pos[2];
    *count = 1;
    return;
  }
  Cell *c = (Cell *)node;
  double m = 0, mp[3] = {0, 0, 0};
  int cnt = 0;
  for (int o = 0; o < 8; o++) {
    double cm, cmp[3];
    int ccount;
    void *ch = c->child[o];
    if (ch == NULL) continue;
    if (*(int *)ch == K_CELL) {
      Cell *cc = (Cell *)ch;
      if (cc->nleaves <= 0) com_node(ch, &cm, cmp, &ccount); /* not yet computed */
      else {
        cm = cc->mass;
        cmp[0] = cc->mass * cc->com->v[0];
        cmp[1] = cc->mass * cc->com->v[1];
        cmp[2] = cc->mass * cc->com->v[2];
        ccount = cc->nleaves;
      }
    } else {
      com_node(ch, &cm, cmp, &ccount);
    }
    m += cm;
    mp[0] += cmp[0];
    mp[1] += cmp[1];
    mp[2] += cmp[2];
    cnt += ccount;
  }
  c->mass = m;
  c->nleaves = cnt;
  if (m > 0) {
    c->com->v[0] = mp[0] / m;
    c->com->v[1] = mp[1] / m;
    c->com->v[2] = mp[2] / m;
  }
  *mass = m;
  m_pos[0] = m > 0 ? m * c->com->v[0] : 0;
  m_pos[1] = m > 0 ? m * c->com->v[1] : 0;
  m_pos[2] = m > 0 ? m * c->com->v[2] : 0;
  *count = cnt;
}

static void com_slot(int slot) {
  Cell *c2 = level2[slot >> 3];
  void *ch = c2->child[slot & 7];
  if (ch && *(int *)ch == K_CELL) {
    double m, mp[3];
    int cnt;
    com_node(ch, &m, mp, &cnt);
  }
}

static void com_top(void) {
  /* level 2 cells use their (computed) children; then level 1, then root */
  double m, mp[3];
  int cnt;
  /* new cells start with nleaves == 0, so com_node recomputes the top
   * levels and reuses the per-slot results below them */
  com_node(root, &m, mp, &cnt);
}

static void make_top(void) {
  double lo[3], hi[3];
  for (int d = 0; d < 3; d++) lo[d] = hi[d] = bodies[0]->pos[d];
  for (long i = 1; i < nbodies; i++)
    for (int d = 0; d < 3; d++) {
      double x = bodies[i]->pos[d];
      if (x < lo[d]) lo[d] = x;
      if (x > hi[d]) hi[d] = x;
    }
  double size = 0, centre[3];
  for (int d = 0; d < 3; d++) {
    if (hi[d] - lo[d] > size) size = hi[d] - lo[d];
    centre[d] = 0.5 * (lo[d] + hi[d]);
  }
  size = size * 1.0001 + 1e-9;
  double half = size * 0.5;
  root = new_cell(size);
  for (int o = 0; o < 8; o++) {
    double c1[3];
    child_centre(centre, half, o, c1);
    Cell *k1 = new_cell(half);
    root->child[o] = k1;
    for (int p = 0; p < 8; p++) {
      Cell *k2 = new_cell(half * 0.5);
      k1->child[p] = k2;
      /* level-2 index: body octant at level 1 is o, at level 2 is p */
      level2[o * 8 + p] = k2;
      child_centre(c1, half * 0.5, p, l2_centre[o * 8 + p]);
    }
  }
  l2_half = half * 0.25;
  memcpy(root_centre, centre, sizeof root_centre);
  root_half = half;
  atomic_fetch_add(&allocs_atomic, 2 * 73);
}

/* slot (0..511) of a position: octants at levels 1, 2 and 3 */
static int slot_of_pos(const double *p) {
  int o1 = octant(p, root_centre);
  double c1[3];
  child_centre(root_centre, root_half, o1, c1);
  int o2 = octant(p, c1);
  int l2 = o1 * 8 + o2;
  int o3 = octant(p, l2_centre[l2]);
  return l2 * 8 + o3;
}

static Leaf *new_leaf(Body *b) {
  Leaf *l = (Leaf *)gc_alloc(sizeof(Leaf));
  l->kind = K_LEAF;
  l->index = b->index;
  l->mass = b->mass;
  l->pos[0] = b->pos[0];
  l->pos[1] = b->pos[1];
  l->pos[2] = b->pos[2];
  l->body = b;
  return l;
}

/* Insert the bodies of the slots owned by thread `tid` of `nt`. */
static void build_slots(int tid, int nt) {
  long made = 0;
  for (long i = 0; i < nbodies; i++) {
    Body *b = bodies[i];
    int s = slot_of_pos(b->pos);
    if (s % nt != tid) continue;
    Leaf *l = new_leaf(b);
    made++;
    int l2 = s >> 3;
    made += insert(level2[l2], l2_centre[l2], l2_half, l);
  }
  atomic_fetch_add(&allocs_atomic, made);
}

static void force_on(const double *p, int self, const void *node, double *acc) {
  if (node == NULL) return;
  if (*(const int *)node == K_LEAF) {
    const Leaf *l = (const Leaf *)node;
    if (l->index == self) return;
    double dx = l->pos[0] - p[0], dy = l->pos[1] - p[1], dz = l->pos[2] - p[2];
    double r2 = dx * dx + dy * dy + dz * dz + eps2;
    double inv = l->mass / (r2 * sqrt(r2));
    acc[0] += dx * inv;
    acc[1] += dy * inv;
    acc[2] += dz * inv;
    return;
  }
  const Cell *c = (const Cell *)node;
  if (c->mass <= 0) return;
  const double *q = c->com->v;
  double dx = q[0] - p[0], dy = q[1] - p[1], dz = q[2] - p[2];
  double d2 = dx * dx + dy * dy + dz * dz;
  if (c->size * c->size < theta * theta * d2) {
    double r2 = d2 + eps2;
    double inv = c->mass / (r2 * sqrt(r2));
    acc[0] += dx * inv;
    acc[1] += dy * inv;
    acc[2] += dz * inv;
    return;
  }
  for (int o = 0; o < 8; o++) force_on(p, self, c->child[o], acc);
}

static void direct_force(long i, double *acc) {
  const double *p = bodies[i]->pos;
  acc[0] = acc[1] = acc[2] = 0;
  for (long j = 0; j < nbodies; j++) {
    if (j == i) continue;
    const Body *b = bodies[j];
    double dx = b->pos[0] - p[0], dy = b->pos[1] - p[1], dz = b->pos[2] - p[2];
    double r2 = dx * dx + dy * dy + dz * dz + eps2;
    double inv = b->mass / (r2 * sqrt(r2));
    acc[0] += dx * inv;
    acc[1] += dy * inv;
    acc[2] += dz * inv;
  }
}

static long count_leaves(const void *node, unsigned char *seen, int *dup) {
  if (node == NULL) return 0;
  if (*(const int *)node == K_LEAF) {
    const Leaf *l = (const Leaf *)node;
    if (l->index < 0 || l->index >= nbodies || seen[l->index]++ || l->body != bodies[l->index])
      *dup = 1;
    return 1;
  }
  if (*(const int *)node != K_CELL) {
    *dup = 1;
    return 0;
  }
  const Cell *c = (const Cell *)node;
  long n = 0;
  for (int o = 0; o < 8; o++) n += count_leaves(c->child[o], seen, dup);
  return n;
}

static void check_step(int step) {
  /* tree structure */
  unsigned char *seen = (unsigned char *)calloc((size_t)nbodies, 1);
  int bad = 0;
  long n = count_leaves(root, seen, &bad);
  free(seen);
  if (bad || n != nbodies) bench_fail("step %d: tree holds %ld leaves (expected %ld)%s", step, n,
                                     nbodies, bad ? ", with duplicates or bad nodes" : "");
  /* mass and centre of mass */
  double m = 0, mp[3] = {0, 0, 0};
  for (long i = 0; i < nbodies; i++) {
    m += bodies[i]->mass;
    for (int d = 0; d < 3; d++) mp[d] += bodies[i]->mass * bodies[i]->pos[d];
  }
  if (fabs(root->mass - m) > 1e-9 * m) bench_fail("step %d: root mass %.17g, expected %.17g", step,
                                                  root->mass, m);
  for (int d = 0; d < 3; d++)
    if (fabs(root->com->v[d] - mp[d] / m) > 1e-9 * (1 + root->size))
      bench_fail("step %d: centre of mass[%d] %.17g, expected %.17g", step, d, root->com->v[d],
                 mp[d] / m);
  /* sampled force accuracy */
  for (int s = 0; s < nsample; s++) {
    long i = (long)(((uint64_t)step * 7919u + (uint64_t)s * (uint64_t)nbodies / (uint64_t)nsample) %
                    (uint64_t)nbodies);
    double a[3];
    direct_force(i, a);
    const double *b = bodies[i]->acc;
    err_sum += sqrt((a[0] - b[0]) * (a[0] - b[0]) + (a[1] - b[1]) * (a[1] - b[1]) +
                    (a[2] - b[2]) * (a[2] - b[2]));
    ref_sum += sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]);
  }
}

typedef struct {
  int id;
} Worker;

static void *worker(void *arg) {
  int id = ((Worker *)arg)->id;
  long lo = nbodies * id / nthreads, hi = nbodies * (id + 1) / nthreads;
  for (int step = 0; step < nsteps; step++) {
    /* (1) top of the tree */
    if (id == 0) make_top();
    pthread_barrier_wait(&barrier);
    /* (2) tree construction */
    if (parallel_tree) {
      build_slots(id, nthreads);
    } else if (id == 0) {
      build_slots(0, 1);
    }
    pthread_barrier_wait(&barrier);
    /* (3) centres of mass */
    if (parallel_tree) {
      for (int s = id; s < 512; s += nthreads) com_slot(s);
    } else if (id == 0) {
      for (int s = 0; s < 512; s++) com_slot(s);
    }
    pthread_barrier_wait(&barrier);
    if (id == 0) com_top();
    pthread_barrier_wait(&barrier);
    /* (4) forces */
    for (long i = lo; i < hi; i++) {
      Body *b = bodies[i];
      double a[3] = {0, 0, 0};
      force_on(b->pos, b->index, root, a);
      b->acc[0] = a[0];
      b->acc[1] = a[1];
      b->acc[2] = a[2];
    }
    pthread_barrier_wait(&barrier);
    if (id == 0) check_step(step);
    pthread_barrier_wait(&barrier);
    /* (5) move */
    for (long i = lo; i < hi; i++) {
      Body *b = bodies[i];
      for (int d = 0; d < 3; d++) {
        b->vel[d] += b->acc[d] * dt;
        b->pos[d] += b->vel[d] * dt;
      }
    }
    pthread_barrier_wait(&barrier);
  }
  return NULL;
}

int main(int argc, char **argv) {
  int opt;
  const char *mode = "st";
  while ((opt = getopt(argc, argv, "t:n:s:m:a:c:h")) != -1) {
    switch (opt) {
      case 't': nthreads = (int)bench_arg_long("-t", optarg, 1, 4096); break;
      case 'n': nbodies = bench_arg_long("-n", optarg, 2, 1L << 26); break;
      case 's': nsteps = (int)bench_arg_long("-s", optarg, 1, 100000); break;
      case 'a': theta = bench_arg_double("-a", optarg, 0.0, 2.0); break;
      case 'c': nsample = (int)bench_arg_long("-c", optarg, 0, 1 << 20); break;
      case 'm':
        if (strcmp(optarg, "st") == 0) parallel_tree = 0;
        else if (strcmp(optarg, "pt") == 0) parallel_tree = 1;
        else BENCH_USAGE_EXIT("bh: -m st|pt\n");
        mode = optarg;
        break;
      default:
        BENCH_USAGE_EXIT("usage: bh [-t threads] [-m st|pt] [-n bodies] [-s steps] [-a theta] [-c samples]\n");
    }
  }
  GC_INIT();
  bench_marked_init();
  pthread_barrier_init(&barrier, NULL, (unsigned)nthreads);

  /* initial conditions: uniform in the unit sphere, small random motion,
   * zero total momentum */
  bodies = (Body **)bench_xmalloc(sizeof(Body *) * (size_t)nbodies);
  bench_rng rng = {12345};
  double vsum[3] = {0, 0, 0};
  for (long i = 0; i < nbodies; i++) {
    Body *b = (Body *)bench_xmalloc(sizeof(Body));
    memset(b, 0, sizeof *b);
    b->kind = K_BODY;
    b->index = (int)i;
    b->mass = 1.0 / (double)nbodies;
    double r2;
    do {
      for (int d = 0; d < 3; d++) b->pos[d] = 2 * bench_rng_unit(&rng) - 1;
      r2 = b->pos[0] * b->pos[0] + b->pos[1] * b->pos[1] + b->pos[2] * b->pos[2];
    } while (r2 > 1.0);
    /* slow rotation about z plus noise */
    b->vel[0] = -0.3 * b->pos[1] + 0.05 * (bench_rng_unit(&rng) - 0.5);
    b->vel[1] = 0.3 * b->pos[0] + 0.05 * (bench_rng_unit(&rng) - 0.5);
    b->vel[2] = 0.05 * (bench_rng_unit(&rng) - 0.5);
    for (int d = 0; d < 3; d++) vsum[d] += b->vel[d];
    bodies[i] = b;
  }
  for (long i = 0; i < nbodies; i++)
    for (int d = 0; d < 3; d++) bodies[i]->vel[d] -= vsum[d] / (double)nbodies;
  double pscale = 0;
  for (long i = 0; i < nbodies; i++)
    pscale += bodies[i]->mass * sqrt(bodies[i]->vel[0] * bodies[i]->vel[0] +
                                     bodies[i]->vel[1] * bodies[i]->vel[1] +
                                     bodies[i]->vel[2] * bodies[i]->vel[2]);

  Worker *ws = (Worker *)calloc((size_t)nthreads, sizeof(Worker));
  for (int i = 0; i < nthreads; i++) ws[i].id = i;
  double t0 = bench_now();
  if (nthreads == 1) worker(&ws[0]);
  else bench_run_threads(nthreads, worker, ws, sizeof(Worker));
  double wall = bench_now() - t0;

  /* final checks */
  double rel_err = ref_sum > 0 ? err_sum / ref_sum : 0;
  if (nsample > 0 && !(rel_err < 0.05))
    bench_fail("Barnes-Hut force error %.4f exceeds 0.05 (theta %.2f)", rel_err, theta);
  double p[3] = {0, 0, 0};
  uint64_t h = 0;
  for (long i = 0; i < nbodies; i++) {
    for (int d = 0; d < 3; d++) {
      uint64_t bits;
      memcpy(&bits, &bodies[i]->pos[d], sizeof bits);
      h = bench_mix(h, bits);
      p[d] += bodies[i]->mass * bodies[i]->vel[d];
    }
  }
  double pmag = sqrt(p[0] * p[0] + p[1] * p[1] + p[2] * p[2]);
  if (!(pmag < 0.02 * pscale + 1e-12))
    bench_fail("total momentum %.3g drifted (scale %.3g)", pmag, pscale);

  long na = atomic_load(&allocs_atomic);
  bench_result_begin("bh", nthreads, wall);
  bench_kv("mode", "%s", mode);
  bench_kv("bodies", "%ld", nbodies);
  bench_kv("steps", "%d", nsteps);
  bench_kv("allocs", "%ld", na);
  bench_kv("mops", "%.3f", (double)na / wall / 1e6);
  bench_kv("force_err", "%.5f", rel_err);
  bench_kv("momentum", "%.3g", pmag);
  bench_kv("hash", "%016llx", (unsigned long long)h);
  free(ws);
  return bench_result_end();
}
