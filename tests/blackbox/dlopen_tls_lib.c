/* dlopen_tls_lib: a library that knows nothing about the collector and
 * keeps the pointers it is given only in __thread variables.  Loaded with
 * dlopen, its thread-local storage is dynamic: glibc allocates each
 * thread's block with malloc on the thread's first use (used by
 * dlopen_tls.c).  Built twice: as is, and with TLS_PAD_BYTES of padding
 * in front of the slots, a block of another size under the same module
 * id once the first copy is closed. */
#include <stddef.h>

#ifndef TLS_PAD_BYTES
#define TLS_PAD_BYTES 0
#endif
#define SLOTS 16

struct tls_block {
  char pad[TLS_PAD_BYTES + 1];
  void *slots[SLOTS];
};
static __thread struct tls_block block; /* static: no interposition */

void tls_store(int i, void *p) { block.slots[i] = p; }
void *tls_load(int i) { return block.slots[i]; }
int tls_slots(void) { return SLOTS; }
/* Where this thread's block is (the test checks it is dynamic TLS). */
void *tls_block_address(void) { return &block; }
