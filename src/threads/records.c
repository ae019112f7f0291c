/* Thread records: from pages of sgc's own, not malloc.  glibc gives a
 * thread that never called malloc an arena of its own at its first call,
 * 64 MiB of address space, which under an address-space limit the heap
 * then lacks: a thread made with plain pthread_create registers at its
 * first allocation, and its record's posix_memalign took one.  Records
 * of threads gone wait on a list for the next; the pages are never given
 * back (as page stores are not). */
#include <string.h>

#include "alloc/alloc.h"
#include "common.h"
#include "os/os.h"
#include "threads/thread.h"

/* Cache-line aligned and padded: two threads' hot fields (free lists,
 * counters) never share a line.  A page-aligned slab keeps the alignment. */
#define RECORD_BYTES ((sizeof(struct sgc_thread) + 127) & ~(size_t)127)
enum { RECORDS_PER_SLAB = 16 };

static pthread_mutex_t records_lock = PTHREAD_MUTEX_INITIALIZER;
static struct sgc_thread *records_free; /* linked through next */

struct sgc_thread *thread_record_new(void) {
  pthread_mutex_lock(&records_lock);
  struct sgc_thread *rec = records_free;
  if (rec) {
    records_free = rec->next;
  } else {
    char *slab = os_alloc(RECORD_BYTES * RECORDS_PER_SLAB);
    if (slab) {
      for (size_t i = RECORDS_PER_SLAB - 1; i > 0; i--) {
        struct sgc_thread *spare = (struct sgc_thread *)(slab + i * RECORD_BYTES);
        spare->next = records_free;
        records_free = spare;
      }
      rec = (struct sgc_thread *)slab;
    }
  }
  pthread_mutex_unlock(&records_lock);
  if (!rec) return NULL;
  memset(rec, 0, RECORD_BYTES);
  free_record_init(&rec->alloc);
  return rec;
}

void thread_record_free(struct sgc_thread *rec) {
  pthread_mutex_lock(&records_lock);
  rec->next = records_free;
  records_free = rec;
  pthread_mutex_unlock(&records_lock);
}

/* A fork may have copied the lock held: each step under it leaves the
 * list whole (a record in flight is only lost). */
void thread_records_after_fork_child(void) { pthread_mutex_init(&records_lock, NULL); }
