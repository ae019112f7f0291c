/* oracle_weak.h: weak-key tables for the reachability oracle, built the
 * way Guile 3.0 builds its own: buckets of chained entries that are typed
 * objects (gc_typed.h) whose descriptor names only the chain link, each
 * holding its key in a word the descriptor leaves out, with a
 * disappearing link registered on that word.  Keys and link words are
 * read and written under GC_call_with_alloc_lock, as Guile does.
 *
 * What each thread's table checks, while other threads collect:
 *  - a key that was not cleared is the object it was: intact header,
 *    the id recorded beside it (cleared only once the object died);
 *  - a key also kept strongly (in the table's strong ring, for as long
 *    as the ring keeps it) is never cleared;
 *  - the chains stay chains: walked with a bound of the entries put in,
 *    a chain that loops (an entry handed out again while still in one)
 *    is caught.
 * Entries whose keys were cleared are pruned as Guile's vacuum does:
 * unlinked, their links unregistered.  Now and then a live entry moves
 * to a fresh one with GC_move_disappearing_link, as Guile's weak sets
 * move theirs when they grow: the link must follow (the moved key is
 * checked like any other from then on).  The caller's KEY_INTACT(base, id)
 * says whether the object at BASE has the header of object ID. */
#ifndef ORACLE_WEAK_H
#define ORACLE_WEAK_H

#include <gc/gc_typed.h>

#define WEAK_BUCKETS 61
#define WEAK_STRONG_N 32
#define WEAK_ENTRIES_MAX 1500

typedef struct weak_entry {
    uint64_t hash;
    struct weak_entry *next; /* the only word the descriptor names */
    void *key;               /* weak: the disappearing link's word */
    uint64_t key_id;
    uint32_t strong_slot;    /* 1 + ring slot keeping the key, or 0 */
    uint32_t strong_gen;     /* that slot's generation then */
} weak_entry;

typedef struct weak_table {
    weak_entry **buckets;    /* GC_MALLOC'd */
    void **strong;           /* GC_MALLOC'd ring of keys kept strongly */
    uint32_t strong_gen[WEAK_STRONG_N];
    uint32_t strong_next;
    uint64_t entries, put, pruned;
} weak_table;

typedef int (*weak_key_intact_fn)(const void *base, uint64_t id);

static GC_descr weak_entry_descr;
static _Atomic uint64_t g_weak_put, g_weak_pruned, g_weak_checked, g_weak_moved;

static void weak_tables_init(void)
{
    GC_word bitmap[GC_BITMAP_SIZE(weak_entry)] = {0};
    GC_set_bit(bitmap, GC_WORD_OFFSET(weak_entry, next));
    weak_entry_descr = GC_make_descriptor(bitmap, GC_WORD_LEN(weak_entry));
}

static void weak_table_init(weak_table *w)
{
    memset(w, 0, sizeof *w);
    w->buckets = GC_MALLOC(WEAK_BUCKETS * sizeof *w->buckets);
    w->strong = GC_MALLOC(WEAK_STRONG_N * sizeof *w->strong);
    CHECK(w->buckets != NULL && w->strong != NULL);
}

struct weak_read {
    weak_entry *e;
    void *key;
};
static void *weak_read_key_locked(void *arg)
{
    struct weak_read *r = arg;
    r->key = r->e->key;
    return NULL;
}
static void *weak_read_key(weak_entry *e)
{
    struct weak_read r = {e, NULL};
    GC_call_with_alloc_lock(weak_read_key_locked, &r);
    return r.key;
}

/* Puts KEY (an object's base, of id KEY_ID) in; with STRONG, the ring
 * keeps it too (dropping the key of the slot's previous turn). */
static void weak_table_put(weak_table *w, void *key, uint64_t key_id, int strong)
{
    if (w->entries >= WEAK_ENTRIES_MAX)
        return;
    weak_entry *e = GC_malloc_explicitly_typed(sizeof *e, weak_entry_descr);
    CHECK(e != NULL);
    e->hash = key_id * 0x9e3779b97f4a7c15ULL;
    e->key_id = key_id;
    if (strong) {
        uint32_t slot = w->strong_next++ % WEAK_STRONG_N;
        w->strong[slot] = key;
        e->strong_slot = slot + 1;
        e->strong_gen = ++w->strong_gen[slot];
    }
    e->key = key;
    CHECK(GC_general_register_disappearing_link(&e->key, key) == GC_SUCCESS);
    weak_entry **bucket = &w->buckets[e->hash % WEAK_BUCKETS];
    e->next = *bucket;
    *bucket = e;
    w->entries++;
    w->put++;
    atomic_fetch_add(&g_weak_put, 1);
}

/* Unlinks *LOC's entry and its disappearing link. */
static void weak_table_unlink(weak_table *w, weak_entry **loc)
{
    weak_entry *e = *loc;
    *loc = e->next;
    e->next = NULL;
    GC_unregister_disappearing_link(&e->key);
    w->entries--;
}

/* Replaces *LOC's entry, whose key KEY the caller holds, by a fresh one
 * and moves the disappearing link along. */
static void weak_table_move(weak_entry **loc, void *key, int tid)
{
    weak_entry *e = *loc;
    weak_entry *fresh = GC_malloc_explicitly_typed(sizeof *fresh, weak_entry_descr);
    CHECK(fresh != NULL);
    fresh->hash = e->hash;
    fresh->key_id = e->key_id;
    fresh->strong_slot = e->strong_slot;
    fresh->strong_gen = e->strong_gen;
    fresh->key = key;
    int moved = GC_move_disappearing_link(&e->key, &fresh->key);
    CHECK(moved == GC_SUCCESS, "thread %d: GC_move_disappearing_link returned %d", tid, moved);
    e->key = NULL;
    fresh->next = e->next;
    *loc = fresh;
    e->next = NULL;
    atomic_fetch_add(&g_weak_moved, 1);
}

/* Checks every chain and entry; prunes entries whose keys were cleared,
 * and with DROP_ONE also one entry picked by PICK (mod the entries); moves
 * an eighth of the live entries (by PICK's upper bits). */
static void weak_table_verify(weak_table *w, weak_key_intact_fn key_intact, int tid,
                              uint64_t pick, int drop_one)
{
    uint64_t seen = 0, target = drop_one && w->entries ? pick % w->entries : UINT64_MAX;
    for (unsigned b = 0; b < WEAK_BUCKETS; b++) {
        weak_entry **loc = &w->buckets[b];
        while (*loc) {
            weak_entry *e = *loc;
            CHECK(seen++ <= w->put,
                  "thread %d: weak table bucket %u loops (more than the %llu entries ever put): "
                  "an entry was handed out again while still in a chain",
                  tid, b, (unsigned long long)w->put);
            CHECK(e->hash % WEAK_BUCKETS == b, "thread %d: weak entry in bucket %u has hash %llx",
                  tid, b, (unsigned long long)e->hash);
            void *key = weak_read_key(e);
            uint32_t slot = e->strong_slot;
            int kept = slot && w->strong_gen[slot - 1] == e->strong_gen;
            if (!key) {
                CHECK(!kept, "thread %d: weak key %llu cleared while kept strongly", tid,
                      (unsigned long long)e->key_id);
                weak_table_unlink(w, loc);
                w->pruned++;
                atomic_fetch_add(&g_weak_pruned, 1);
                continue;
            }
            CHECK(key_intact(key, e->key_id),
                  "thread %d: weak key %llu not cleared, but its object is not intact "
                  "(reclaimed while a link to it stood?)",
                  tid, (unsigned long long)e->key_id);
            CHECK(!kept || w->strong[slot - 1] == key, "thread %d: weak key %llu moved", tid,
                  (unsigned long long)e->key_id);
            atomic_fetch_add(&g_weak_checked, 1);
            if (seen - 1 == target) {
                weak_table_unlink(w, loc);
                continue;
            }
            if (((pick >> 32) + seen) % 8 == 0)
                weak_table_move(loc, key, tid);
            loc = &(*loc)->next;
        }
    }
}

#endif
