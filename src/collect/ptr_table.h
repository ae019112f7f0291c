/* A hash table keyed by hidden pointers, in memory the collector does not
 * scan, so a table entry never keeps its key alive.  Used for finalizers
 * and disappearing links; callers hold meta_lock. */
#ifndef SGC_PTR_TABLE_H
#define SGC_PTR_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ptr_entry {
  struct ptr_entry *next;
  uintptr_t hidden_key;      /* ~address */
  uintptr_t value[2];        /* meaning chosen by the user of the table */
  void (*fn)(void *, void *);
  int mode;
};

struct ptr_table {
  struct ptr_entry **buckets;
  size_t bucket_count, count;
  unsigned bucket_bits; /* log2(bucket_count) */
};

static inline uintptr_t hide_pointer(const void *p) { return ~(uintptr_t)p; }
static inline uintptr_t reveal_pointer_value(uintptr_t h) { return ~h; }
static inline void *reveal_pointer(uintptr_t h) { return (void *)reveal_pointer_value(h); }

struct ptr_entry *ptr_table_find(struct ptr_table *t, const void *key);
/* A new zeroed entry for KEY (not checked for duplicates); NULL when out
 * of memory. */
struct ptr_entry *ptr_table_insert(struct ptr_table *t, const void *key);
/* Unlinks the entry for KEY and returns it (for ptr_entry_release or a
 * queue), or NULL. */
struct ptr_entry *ptr_table_remove(struct ptr_table *t, const void *key);
void ptr_entry_release(struct ptr_entry *e);
/* Calls VISIT on every entry; entries for which it returns true are
 * unlinked and handed to DROP (which may queue or release them).  Safe
 * with the world stopped: allocates nothing. */
void ptr_table_filter(struct ptr_table *t, bool (*visit)(struct ptr_entry *, void *),
                      void (*drop)(struct ptr_entry *, void *), void *arg);

#endif
