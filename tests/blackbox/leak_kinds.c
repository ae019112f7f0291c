/* leak_kinds: leak mode reports objects of kinds the program made
 * (GC_new_kind with GC_generic_malloc, and gc_typed.h's typed objects)
 * that became unreachable without GC_free, once each, and nothing else,
 * as bdwgc does ("object at ADDRESS of appr. SIZE bytes (composite)").
 * Before, sgc reported none of them.  Passes against bdwgc too
 * (tests/run-against-bdwgc.sh).
 *
 * 1. No leaks: threads allocate objects of both kinds, small and large,
 *    free most with GC_free (so free objects sit on thread caches and on
 *    the lists given back), keep the rest and exit; collections then
 *    report nothing, and again once every kept object is freed.
 * 2. Leaks: objects of both kinds dropped without GC_free are each
 *    reported by the next collection, by address, exactly once; the one
 *    after reports none. */
#define GC_THREADS 1
#include <gc.h>
#include <gc/gc_mark.h>
#include <gc/gc_typed.h>

#include "common.h"

#include <unistd.h>

enum { THREADS = 3, PER_THREAD = 6000, KEEP_EVERY = 5, DROPPED = 6 };

static int kind;                /* GC_new_kind: scanned by length */
static GC_descr typed_descr;    /* a typed object: the first word a pointer */
static void **kept[THREADS + 1];
static uintptr_t hidden[DROPPED]; /* ~address: keeps nothing alive */
static char capture_path[] = "/tmp/sgc_leak_kinds_XXXXXX";
static int capture_fd, saved_stderr = -1;
static size_t capture_read;
static int passed;

/* At a failure (CHECK exits), what fd 2 got goes to the real stderr. */
static void show_capture(void)
{
    if (passed || saved_stderr < 0)
        return;
    fflush(stderr);
    char buf[4096];
    ssize_t n;
    off_t at = 0;
    while ((n = pread(capture_fd, buf, sizeof buf, at)) > 0) {
        if (write(saved_stderr, buf, (size_t)n) != n)
            break;
        at += n;
    }
}

/* What fd 2 got since the last call. */
static char *capture_new(void)
{
    fflush(stderr);
    off_t end = lseek(capture_fd, 0, SEEK_END);
    size_t n = (size_t)end - capture_read;
    char *text = malloc(n + 1);
    CHECK(text && pread(capture_fd, text, n, (off_t)capture_read) == (ssize_t)n);
    text[n] = 0;
    capture_read = (size_t)end;
    return text;
}

static void *allocate(unsigned i)
{
    static const size_t sizes[] = {16, 40, 100, 600, 2000, 9000};
    size_t n = sizes[i % 6];
    return i % 2 ? GC_generic_malloc(n, kind) : GC_malloc_explicitly_typed(n, typed_descr);
}

static void churn(int slot)
{
    void **keep = GC_MALLOC(PER_THREAD / KEEP_EVERY * sizeof *keep);
    CHECK(keep);
    kept[slot] = keep;
    for (unsigned i = 0; i < PER_THREAD; i++) {
        void **p = allocate(i + (unsigned)slot);
        CHECK(p, "out of memory");
        p[0] = keep; /* a pointer, as a program's objects hold */
        if (i % KEEP_EVERY == 0)
            keep[i / KEEP_EVERY] = p;
        else
            GC_FREE(p);
    }
}

static void *worker(void *arg)
{
    churn((int)(intptr_t)arg);
    return NULL;
}

static T_NOINLINE void drop_objects(void)
{
    for (unsigned i = 0; i < DROPPED; i++)
        hidden[i] = ~(uintptr_t)allocate(i);
}

static T_NOINLINE void clear_below(void)
{
    volatile char pad[32768];
    for (size_t i = 0; i < sizeof pad; i++)
        pad[i] = 0;
}

static void expect_no_report(const char *when)
{
    GC_gcollect();
    GC_gcollect();
    char *text = capture_new();
    CHECK(!strstr(text, "leaked objects"), "%s, reported:\n%s", when, text);
    free(text);
}

int main(void)
{
    t_test_name = "leak_kinds";
    capture_fd = mkstemp(capture_path);
    saved_stderr = dup(2);
    CHECK(capture_fd >= 0 && saved_stderr >= 0 && dup2(capture_fd, 2) >= 0);
    atexit(show_capture);
    unlink(capture_path);
    GC_set_find_leak(1);
    GC_INIT();
    kind = GC_new_kind(GC_new_free_list(), GC_DS_LENGTH, 1, 1);
    GC_word bitmap[GC_BITMAP_SIZE(void *[2])] = {0};
    GC_set_bit(bitmap, 0);
    typed_descr = GC_make_descriptor(bitmap, 2);

    pthread_t tid[THREADS];
    for (int s = 0; s < THREADS; s++)
        CHECK(pthread_create(&tid[s], NULL, worker, (void *)(intptr_t)s) == 0);
    churn(THREADS);
    for (int s = 0; s < THREADS; s++)
        CHECK(pthread_join(tid[s], NULL) == 0);
    expect_no_report("objects kept or freed");
    for (int s = 0; s <= THREADS; s++) {
        for (unsigned i = 0; i < PER_THREAD / KEEP_EVERY; i++)
            GC_FREE(kept[s][i]);
        GC_FREE(kept[s]);
        kept[s] = NULL;
    }
    expect_no_report("every kept object freed");

    drop_objects();
    clear_below();
    GC_gcollect();
    char *text = capture_new();
    char line[96];
    for (unsigned i = 0; i < DROPPED; i++) {
        snprintf(line, sizeof line, "object at %p of appr.", (void *)~hidden[i]);
        CHECK(t_occurrences(text, line) == 1, "dropped object %u (%s) not reported once:\n%s", i,
              line, text);
    }
    CHECK(t_occurrences(text, "object at ") == DROPPED, "other objects reported:\n%s", text);
    free(text);
    expect_no_report("the collections after the leaks");
    passed = 1;
    printf("leak_kinds: ok\n");
    return 0;
}
