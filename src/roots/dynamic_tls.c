/* Thread-local storage of libraries loaded with dlopen, as roots.
 *
 * A library dlopen()ed after start-up gets dynamic TLS: glibc allocates
 * each thread's block with malloc on the thread's first use of it, and
 * finds it through the thread's dynamic thread vector (DTV).  Such a block
 * is in no stack, no static TLS and no loaded object's data, so an object
 * only a __thread variable of the library referenced was collected
 * (tests/blackbox/dlopen_tls.c); bdwgc scans no TLS at all.  A language
 * runtime loaded as a plugin keeps its per-thread state that way.
 *
 * The DTV is glibc's, private, and read the way the debuggers' library
 * (libthread_db's td_thr_tlsbase) reads it, from the descriptions glibc
 * exports for it (as roots/thread_specific.c does): the thread
 * descriptor's DTV pointer; entry 0 of the DTV, the generation the
 * thread's DTV is current to; entry MODID, the module's block or an odd
 * "unallocated" mark.  A DTV is updated lazily: after a dlclose, a thread
 * that has not touched thread-local data since still names the closed
 * library's block under its module id, which a later dlopen may reuse
 * for a library with a block of another size.  The loader's table of
 * module slots says at which generation each slot got its library; a
 * thread's entry is read only when its DTV is at least that current, as
 * td_thr_tlsbase does, so a stale entry is never taken for the new
 * library's block.
 *
 * Only libraries loaded by dlopen are looked at (a slot of generation 0
 * was filled at start-up, and its blocks are static TLS, which
 * roots_find_thread_tls records per thread), so a program that loads no
 * such library pays nothing per thread.  Blocks a thread recorded as
 * static are not pushed twice.  Without the descriptions (another C
 * library) nothing here is a root, as before. */
#include <dlfcn.h>
#include <link.h>
#include <stdatomic.h>

#include "common.h"
#include "roots/roots.h"
#include "threads/thread.h"

/* What the descriptions give (three 32-bit words each: an element's size
 * in bits, a count, an offset; glibc's nptl_db/structs.def). */
static struct {
  bool known;
  size_t dtv_in_descriptor;    /* offsetof (struct pthread, header.dtv) */
  size_t entry_bytes;          /* sizeof (dtv_t) */
  size_t entry_counter;        /* offsetof (dtv_t, counter) */
  size_t entry_pointer;        /* offsetof (dtv_t, pointer.val) */
  uintptr_t slot_lists;        /* &_rtld_global._dl_tls_dtv_slotinfo_list */
  size_t list_length, list_next, list_slots; /* struct dtv_slotinfo_list */
  size_t slot_bytes, slot_generation, slot_map; /* struct dtv_slotinfo */
  size_t map_tls_offset;       /* offsetof (struct link_map, l_tls_offset) */
} glibc;

/* A field of one machine word: its offset, or false. */
static bool word_field(const char *name, size_t *offset) {
  const uint32_t *d = roots_glibc_description(name);
  if (!d || d[0] != 8 * sizeof(uintptr_t) || d[1] != 1 || d[2] > 65536) return false;
  *offset = d[2];
  return true;
}

void roots_dynamic_tls_init(void) {
  const uint32_t *dtv = roots_glibc_description("_thread_db_dtv_dtv");
  const uint32_t *slots = roots_glibc_description("_thread_db_dtv_slotinfo_list_slotinfo");
  const uint32_t *slot_size = roots_glibc_description("_thread_db_sizeof_dtv_slotinfo");
  uintptr_t rtld_global = (uintptr_t)dlsym(RTLD_DEFAULT, "_rtld_global");
  size_t lists_in_rtld;
  if (!dtv || !slots || !slot_size || !rtld_global) return;
  if (!word_field("_thread_db_pthread_dtvp", &glibc.dtv_in_descriptor) ||
      !word_field("_thread_db_dtv_t_counter", &glibc.entry_counter) ||
      !word_field("_thread_db_dtv_t_pointer_val", &glibc.entry_pointer) ||
      !word_field("_thread_db_rtld_global__dl_tls_dtv_slotinfo_list", &lists_in_rtld) ||
      !word_field("_thread_db_dtv_slotinfo_list_len", &glibc.list_length) ||
      !word_field("_thread_db_dtv_slotinfo_list_next", &glibc.list_next) ||
      !word_field("_thread_db_dtv_slotinfo_gen", &glibc.slot_generation) ||
      !word_field("_thread_db_dtv_slotinfo_map", &glibc.slot_map) ||
      !word_field("_thread_db_link_map_l_tls_offset", &glibc.map_tls_offset))
    return;
  /* An entry and a slot are a few words, each field inside them. */
  glibc.entry_bytes = dtv[0] / 8;
  glibc.slot_bytes = slot_size[0];
  if (dtv[0] % 64 || glibc.entry_bytes == 0 || glibc.entry_bytes > 64 ||
      glibc.entry_counter + sizeof(uintptr_t) > glibc.entry_bytes ||
      glibc.entry_pointer + sizeof(uintptr_t) > glibc.entry_bytes ||
      slots[0] != 8 * glibc.slot_bytes || glibc.slot_bytes == 0 || glibc.slot_bytes > 64 ||
      glibc.slot_generation + sizeof(uintptr_t) > glibc.slot_bytes ||
      glibc.slot_map + sizeof(uintptr_t) > glibc.slot_bytes)
    return;
  glibc.list_slots = slots[2];
  glibc.slot_lists = rtld_global + lists_in_rtld;
  glibc.known = true;
}

/* The libraries with TLS of the current snapshot, and then of them those
 * dlopen loaded: module id, block size, load address, and the
 * generation of the module's slot.  Written and read by the collecting
 * thread alone. */
enum { DYNAMIC_TLS_MODULES_MAX = 256 };
static struct dynamic_tls_module {
  size_t modid, generation;
  uintptr_t block_bytes, load_address;
  /* Nonzero when dlopen gave the library static TLS: every thread's block
   * lies this far below its thread pointer (x86-64). */
  uintptr_t static_offset;
} modules[DYNAMIC_TLS_MODULES_MAX];
static unsigned module_count;

static uintptr_t word_at(uintptr_t address) {
  return atomic_load_explicit((_Atomic uintptr_t *)address, memory_order_relaxed);
}

/* MODID's slot in the loader's table, or 0.  The table is a list of
 * arrays, module ids counting on across them (td_thr_tlsbase's walk). */
static uintptr_t slot_of(size_t modid) {
  uintptr_t list = word_at(glibc.slot_lists);
  for (unsigned hops = 0; list && hops < 1024; hops++) {
    size_t length = word_at(list + glibc.list_length);
    if (modid < length) return list + glibc.list_slots + modid * glibc.slot_bytes;
    modid -= length;
    list = word_at(list + glibc.list_next);
  }
  return 0;
}

void roots_dynamic_tls_begin(void) { module_count = 0; }

void roots_dynamic_tls_note(const struct dl_phdr_info *info) {
  if (!glibc.known || info->dlpi_tls_modid == 0) return;
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type != PT_TLS || ph->p_memsz == 0) continue;
    if (module_count == DYNAMIC_TLS_MODULES_MAX) {
      static atomic_flag warned = ATOMIC_FLAG_INIT;
      if (!atomic_flag_test_and_set_explicit(&warned, memory_order_relaxed))
        sgc_warn("more than %d loaded libraries with thread-local storage: the dynamic "
                 "blocks of the rest are not roots",
                 DYNAMIC_TLS_MODULES_MAX);
      return;
    }
    modules[module_count++] = (struct dynamic_tls_module){
        .modid = info->dlpi_tls_modid, .block_bytes = ph->p_memsz, .load_address = info->dlpi_addr};
    return;
  }
}

/* With the world stopped: a library's slot is filled while dlopen runs,
 * after the library joined the list the snapshot read and before its
 * constructors (the first code that can store into its TLS) run, so the
 * slots are read now, when a registered thread inside dlopen is stopped.
 * A library whose slot does not name it (a struct link_map starts with
 * its load address, public ABI) is being opened or closed, and no program
 * code reads its blocks then; one of generation 0 was loaded at start-up
 * and its blocks are static TLS. */
void roots_dynamic_tls_resolve(void) {
  unsigned kept = 0;
  for (unsigned i = 0; i < module_count; i++) {
    struct dynamic_tls_module mod = modules[i];
    uintptr_t slot = slot_of(mod.modid);
    if (!slot) continue;
    uintptr_t map = word_at(slot + glibc.slot_map);
    mod.generation = word_at(slot + glibc.slot_generation);
    if (!map || ((const struct link_map *)map)->l_addr != mod.load_address) continue;
    if (mod.generation == 0) continue;
    /* glibc's l_tls_offset: 0 (NO_TLS_OFFSET) or -1 (forced dynamic) for
     * a dynamic block, else the static block's distance below the thread
     * pointer.  A library built for the initial-exec model is reached by
     * %fs-relative loads that never fill its DTV entry, and one dlopen
     * loads after a thread registered is in no range that thread
     * recorded: the main thread's block was in no root (a created
     * thread's is in its stack mapping). */
    uintptr_t offset = word_at(map + glibc.map_tls_offset);
    mod.static_offset = offset != 0 && offset < ((uintptr_t)1 << 30) ? offset : 0;
    modules[kept++] = mod;
  }
  module_count = kept;
}

static bool recorded_static(const struct sgc_thread *t, uintptr_t lo, uintptr_t hi) {
  for (unsigned i = 0; i < t->tls_count; i++)
    if (lo >= t->tls[i].lo && hi <= t->tls[i].hi) return true;
  return false;
}

void roots_visit_thread_dynamic_tls(const struct sgc_thread *t, roots_range_visit *visit,
                                     void *arg) {
  if (!module_count || !t->thread_pointer) return;
  uintptr_t dtv = word_at(t->thread_pointer + glibc.dtv_in_descriptor);
  if (!dtv) return;
  size_t current_to = word_at(dtv + glibc.entry_counter); /* entry 0 */
  for (unsigned i = 0; i < module_count; i++) {
    const struct dynamic_tls_module *mod = &modules[i];
    uintptr_t block;
    if (mod->static_offset) {
      block = t->thread_pointer - mod->static_offset;
    } else {
      if (mod->generation > current_to) continue; /* the thread's entry may be stale */
      block = word_at(dtv + mod->modid * glibc.entry_bytes + glibc.entry_pointer);
      /* Null or glibc's odd "not allocated yet" mark ((void *) -1). */
      if (!block || (block & 1)) continue;
    }
    if (recorded_static(t, block, block + mod->block_bytes) ||
        thread_stack_mapping_holds(t, block))
      continue;
    visit(block, block + mod->block_bytes, arg);
  }
}
