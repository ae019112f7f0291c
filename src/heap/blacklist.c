/* Black-listed pages: the counts and the search for a clear window
 * (heap/blacklist.h says why). */
#include "heap/blacklist.h"

_Atomic uint64_t blacklist_noted_now, blacklist_noted_before;
bool blacklist_enabled = true;

void blacklist_collection_start(void) {
  atomic_store_explicit(&blacklist_noted_before,
                        atomic_load_explicit(&blacklist_noted_now, memory_order_relaxed),
                        memory_order_relaxed);
  atomic_store_explicit(&blacklist_noted_now, 0, memory_order_relaxed);
}

size_t blacklist_clear_offset(const struct page_header *head, size_t span_pages, size_t pages,
                              bool whole, size_t *budget) {
  size_t window = whole ? pages : 1;
  /* Tested from the window's last page back: a black-listed page at
   * offset O + K moves the window past it, so each header is read about
   * once however long the span. */
  for (size_t o = 0; o + pages <= span_pages;) {
    size_t k = window;
    if (*budget < window) {
      *budget = 0;
      return SIZE_MAX;
    }
    *budget -= window;
    while (k && !page_blacklisted(&head[o + k - 1])) k--;
    if (!k) return o;
    o += k;
  }
  return SIZE_MAX;
}
