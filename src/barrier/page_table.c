/* A byte per heap page for the manual and mprotect barriers (backend.h).
 * Indexed like the page map: bits 47..34 pick a table of 4096 slots,
 * bits 33..22 a slot, whose 1024 bytes are its pages'.  The slots' bytes
 * are made for a whole covered range at once; untouched bytes cost no
 * memory (anonymous mappings), so a 1 GiB reservation costs 256 KiB of
 * address space and only what its pages in use touch. */
#include <stdatomic.h>

#include "barrier/backend.h"
#include "heap/heap.h"
#include "os/os.h"

enum { SLOT_TABLE_ENTRIES = 1u << PAGEMAP_L2_BITS };

static _Atomic(_Atomic uint8_t *_Atomic *) slot_tables[1u << PAGEMAP_L1_BITS];

bool page_table_cover(uintptr_t lo, uintptr_t hi) {
  lo &= ~(uintptr_t)(CHUNK_BYTES - 1);
  hi = (hi + CHUNK_BYTES - 1) & ~(uintptr_t)(CHUNK_BYTES - 1);
  _Atomic uint8_t *bytes = NULL;
  for (uintptr_t a = lo; a < hi; a += CHUNK_BYTES) {
    size_t i1 = a >> (CHUNK_SHIFT + PAGEMAP_L2_BITS);
    _Atomic uint8_t *_Atomic *table = atomic_load_explicit(&slot_tables[i1], memory_order_acquire);
    if (!table) {
      table = os_alloc(SLOT_TABLE_ENTRIES * sizeof *table);
      if (!table) return false;
      /* Release: a reader that finds the table finds it zeroed. */
      atomic_store_explicit(&slot_tables[i1], table, memory_order_release);
    }
    _Atomic uint8_t *_Atomic *slot = &table[(a >> CHUNK_SHIFT) & (SLOT_TABLE_ENTRIES - 1)];
    if (atomic_load_explicit(slot, memory_order_acquire)) continue;
    if (!bytes) { /* one mapping for the rest of the range */
      bytes = os_alloc(((hi - a) >> CHUNK_SHIFT) * PAGES_PER_CHUNK);
      if (!bytes) return false;
    }
    atomic_store_explicit(slot, bytes, memory_order_release);
    bytes += PAGES_PER_CHUNK;
  }
  return true;
}

_Atomic uint8_t *page_table_byte(uintptr_t a) {
  if (a >> ADDRESS_BITS) return NULL;
  _Atomic uint8_t *_Atomic *table =
      atomic_load_explicit(&slot_tables[a >> (CHUNK_SHIFT + PAGEMAP_L2_BITS)], memory_order_acquire);
  if (!table) return NULL;
  _Atomic uint8_t *bytes = atomic_load_explicit(
      &table[(a >> CHUNK_SHIFT) & (SLOT_TABLE_ENTRIES - 1)], memory_order_acquire);
  return bytes ? &bytes[(a >> PAGE_SHIFT) & (PAGES_PER_CHUNK - 1)] : NULL;
}
