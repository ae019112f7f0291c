/*
 * matmul: dense matrix product with GC-allocated rows (thesis §1.1, §2.4.3,
 * Figure 2.6).
 *
 * C = A x B for -n x -n (500) matrices of doubles, -r (10) times.  Every
 * matrix is an array of row pointers (a GC object) and every row is its own
 * atomic GC object.  Before each multiplication ALL rows of A, B and C are
 * reallocated (new row objects, values copied from the old rows), row i by
 * thread i mod T (round-robin), so the old rows become garbage; then
 * thread t computes the rows i of C with i mod T == t.
 *
 * A and B hold small integers, so every product is exact in double
 * precision.  Check (every repetition): each row sum of C equals
 * sum_k A[i][k] * rowsum(B[k]) computed in 64-bit integers, and a sample
 * of entries is recomputed exactly; the hash of C is independent of the
 * thread count.
 */
#include "bench_common.h"

static int n = 500, reps = 10, nthreads = 1;
static double **A, **B, **C; /* static: roots */
static pthread_barrier_t barrier;
static int64_t *rowsum_b;

static int64_t a_val(int i, int k) { return (int64_t)((i * 7 + k * 3) % 11) - 5; }
static int64_t b_val(int k, int j) { return (int64_t)((k * 5 + j * 11) % 13) - 6; }

static double *new_row(const double *old) {
  double *r = (double *)bench_xmalloc_atomic(sizeof(double) * (size_t)n);
  if (old) memcpy(r, old, sizeof(double) * (size_t)n);
  else memset(r, 0, sizeof(double) * (size_t)n);
  return r;
}

typedef struct {
  int id;
  long rows_allocated;
  int failed;
} Worker;

static void *worker(void *arg) {
  Worker *w = (Worker *)arg;
  for (int rep = 0; rep < reps; rep++) {
    /* reallocate my rows (round-robin ownership) */
    for (int i = w->id; i < n; i += nthreads) {
      A[i] = new_row(A[i]);
      B[i] = new_row(B[i]);
      C[i] = new_row(NULL);
      w->rows_allocated += 3;
    }
    pthread_barrier_wait(&barrier);
    /* multiply my rows of C: i-k-j order */
    for (int i = w->id; i < n; i += nthreads) {
      double *ci = C[i];
      const double *ai = A[i];
      for (int k = 0; k < n; k++) {
        double a = ai[k];
        const double *bk = B[k];
        for (int j = 0; j < n; j++) ci[j] += a * bk[j];
      }
    }
    pthread_barrier_wait(&barrier);
    /* check my rows */
    for (int i = w->id; i < n; i += nthreads) {
      int64_t want = 0, got = 0;
      for (int k = 0; k < n; k++) want += a_val(i, k) * rowsum_b[k];
      for (int j = 0; j < n; j++) got += (int64_t)C[i][j];
      if (got != want) {
        if (!w->failed) bench_fail("rep %d row %d: sum %lld, expected %lld", rep, i, (long long)got,
                                   (long long)want);
        w->failed = 1;
      }
      int j = (i * 31 + rep * 17) % n;
      int64_t e = 0;
      for (int k = 0; k < n; k++) e += a_val(i, k) * b_val(k, j);
      if ((int64_t)C[i][j] != e || (double)e != C[i][j]) {
        if (!w->failed) bench_fail("rep %d C[%d][%d] = %.17g, expected %lld", rep, i, j, C[i][j],
                                   (long long)e);
        w->failed = 1;
      }
    }
    pthread_barrier_wait(&barrier);
  }
  return NULL;
}

int main(int argc, char **argv) {
  int opt;
  while ((opt = getopt(argc, argv, "t:n:r:h")) != -1) {
    switch (opt) {
      case 't': nthreads = (int)bench_arg_long("-t", optarg, 1, 4096); break;
      case 'n': n = (int)bench_arg_long("-n", optarg, 1, 1 << 15); break;
      case 'r': reps = (int)bench_arg_long("-r", optarg, 1, 1 << 20); break;
      default: BENCH_USAGE_EXIT("usage: matmul [-t threads] [-n size] [-r repetitions]\n");
    }
  }
  GC_INIT();
  A = (double **)bench_xmalloc(sizeof(double *) * (size_t)n);
  B = (double **)bench_xmalloc(sizeof(double *) * (size_t)n);
  C = (double **)bench_xmalloc(sizeof(double *) * (size_t)n);
  rowsum_b = (int64_t *)calloc((size_t)n, sizeof(int64_t));
  for (int i = 0; i < n; i++) {
    A[i] = new_row(NULL);
    B[i] = new_row(NULL);
    C[i] = NULL;
    for (int j = 0; j < n; j++) {
      A[i][j] = (double)a_val(i, j);
      B[i][j] = (double)b_val(i, j);
      rowsum_b[i] += b_val(i, j);
    }
  }
  pthread_barrier_init(&barrier, NULL, (unsigned)nthreads);
  Worker *ws = (Worker *)calloc((size_t)nthreads, sizeof(Worker));
  for (int i = 0; i < nthreads; i++) ws[i].id = i;
  double t0 = bench_now();
  if (nthreads == 1) worker(&ws[0]);
  else bench_run_threads(nthreads, worker, ws, sizeof(Worker));
  double wall = bench_now() - t0;

  long rows = 0;
  for (int i = 0; i < nthreads; i++) rows += ws[i].rows_allocated;
  uint64_t h = 0;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) h = bench_mix(h, (uint64_t)(int64_t)C[i][j]);
  double flops = 2.0 * (double)n * (double)n * (double)n * (double)reps;
  bench_result_begin("matmul", nthreads, wall);
  bench_kv("n", "%d", n);
  bench_kv("reps", "%d", reps);
  bench_kv("allocs", "%ld", rows);
  bench_kv("gflops", "%.3f", flops / wall / 1e9);
  bench_kv("mops", "%.6f", (double)rows / wall / 1e6);
  bench_kv("hash", "%016llx", (unsigned long long)h);
  free(ws);
  return bench_result_end();
}
