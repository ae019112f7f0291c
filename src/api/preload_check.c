/* Preloaded in place of bdwgc: refuse to mix two collectors.
 *
 * `LD_PRELOAD=libsgc.so program` serves every GC_ function sgc defines;
 * libgc.so.1 stays loaded because the program needs it, so an import sgc
 * does not define (GC_register_disclaim_proc, GC_toggleref_add, ...) binds to
 * bdwgc's.  That call would run a second, uninitialised collector over
 * objects it does not know: silent corruption at some later time.  So at
 * start-up, when libgc is loaded beside sgc, every loaded object's
 * undefined GC_ symbols are looked up, and any that resolves into libgc is
 * reported -- a fatal error by default, before the program has any data.
 * SGC_PRELOAD_CHECK=warn reports and goes on, =off skips the check.
 *
 * The imports come from each object's dynamic symbol table
 * (dl_iterate_phdr), whose length the ELF hash sections give.
 *
 * The same look at the loaded objects tells init.c whether sgc stands in
 * for libgc, where SGC_EXTRA_BYTES defaults to bdwgc's padding. */
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/env.h"
#include "common.h"

enum { LIST_BYTES = 360 };

struct check {
  uintptr_t libgc_base; /* 0: libgc is not loaded */
  uintptr_t sgc_base;
  char list[LIST_BYTES]; /* the offending names, comma-separated */
  size_t list_len;
  bool truncated;        /* more names than the list holds */
};

static bool is_libgc(const char *path) {
  const char *base = strrchr(path, '/');
  base = base ? base + 1 : path;
  return strncmp(base, "libgc.so", 8) == 0;
}

/* Dynamic-section addresses are relocated in place by glibc for most
 * objects, but not for the vDSO: take either form. */
static const void *dyn_address(const struct dl_phdr_info *info, ElfW(Addr) value) {
  return (const void *)(value < info->dlpi_addr ? value + info->dlpi_addr : value);
}

/* Symbols in an object's dynamic symbol table, from DT_HASH's chain count
 * or from DT_GNU_HASH (highest bucket start, then along its chain to the
 * entry that ends it). */
static size_t symbol_count(const uint32_t *hash, const uint32_t *gnu_hash) {
  if (hash) return hash[1];
  if (!gnu_hash) return 0;
  uint32_t nbuckets = gnu_hash[0], symoffset = gnu_hash[1], bloom_words = gnu_hash[2];
  const uint32_t *buckets =
      (const uint32_t *)((const ElfW(Addr) *)(gnu_hash + 4) + bloom_words);
  const uint32_t *chain = buckets + nbuckets;
  uint32_t last = 0;
  for (uint32_t b = 0; b < nbuckets; b++)
    if (buckets[b] > last) last = buckets[b];
  if (last < symoffset) return symoffset;
  while (!(chain[last - symoffset] & 1)) last++;
  return (size_t)last + 1;
}

static void note_offender(struct check *c, const char *name) {
  /* Each name once: several objects may import the same one. */
  size_t n = strlen(name);
  for (const char *p = c->list; (p = strstr(p, name)) != NULL; p += n)
    if ((p == c->list || p[-1] == ' ') && (p[n] == ',' || p[n] == '\0')) return;
  if (c->list_len + n + 3 >= LIST_BYTES) {
    c->truncated = true;
    return;
  }
  c->list_len += (size_t)snprintf(c->list + c->list_len, LIST_BYTES - c->list_len, "%s%s",
                                  c->list_len ? ", " : "", name);
}

static void check_imports(const struct dl_phdr_info *info, struct check *c) {
  const ElfW(Dyn) *dyn = NULL;
  for (int i = 0; i < info->dlpi_phnum; i++)
    if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
      dyn = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
  if (!dyn) return;
  const ElfW(Sym) *symtab = NULL;
  const char *strtab = NULL;
  const uint32_t *hash = NULL, *gnu_hash = NULL;
  for (; dyn->d_tag != DT_NULL; dyn++) {
    switch (dyn->d_tag) {
    case DT_SYMTAB: symtab = dyn_address(info, dyn->d_un.d_ptr); break;
    case DT_STRTAB: strtab = dyn_address(info, dyn->d_un.d_ptr); break;
    case DT_HASH: hash = dyn_address(info, dyn->d_un.d_ptr); break;
    case DT_GNU_HASH: gnu_hash = dyn_address(info, dyn->d_un.d_ptr); break;
    }
  }
  if (!symtab || !strtab) return;
  size_t count = symbol_count(hash, gnu_hash);
  for (size_t i = 1; i < count; i++) {
    const ElfW(Sym) *s = &symtab[i];
    const char *name = strtab + s->st_name;
    if (s->st_shndx != SHN_UNDEF || strncmp(name, "GC_", 3) != 0) continue;
    void *target = dlsym(RTLD_DEFAULT, name);
    Dl_info where;
    if (target && dladdr(target, &where) && (uintptr_t)where.dli_fbase == c->libgc_base)
      note_offender(c, name);
  }
}

/* bdwgc's library, not sgc loaded under its name (which has no
 * collector of its own to mix with). */
static int find_libgc(struct dl_phdr_info *info, size_t size, void *arg) {
  struct check *c = arg;
  if (info->dlpi_name && is_libgc(info->dlpi_name) && info->dlpi_addr != c->sgc_base)
    c->libgc_base = info->dlpi_addr;
  return 0;
}

/* Where sgc is loaded and under which file name; false if unknown. */
static bool find_self(struct check *c, const char **name) {
  Dl_info self;
  if (!dladdr((void *)find_self, &self)) return false;
  c->sgc_base = (uintptr_t)self.dli_fbase;
  *name = self.dli_fname ? self.dli_fname : "";
  return true;
}

static int visit_object(struct dl_phdr_info *info, size_t size, void *arg) {
  struct check *c = arg;
  /* libgc's own references to itself are its business; sgc's are its own. */
  if (info->dlpi_addr == c->libgc_base || info->dlpi_addr == c->sgc_base) return 0;
  if (info->dlpi_name && strstr(info->dlpi_name, "linux-vdso")) return 0;
  check_imports(info, c);
  return 0;
}

/* libgc is loaded (the program or a library it uses needs libgc.so.1),
 * or sgc itself was loaded under libgc's name: the program was built
 * against bdwgc, whose objects have a byte to spare past their end. */
bool preload_stands_in_for_libgc(void) {
  struct check c = {0};
  const char *name = "";
  if (find_self(&c, &name) && is_libgc(name)) return true;
  dl_iterate_phdr(find_libgc, &c);
  return c.libgc_base != 0;
}

void preload_check(void) {
  enum { CHECK_FATAL, CHECK_WARN, CHECK_OFF };
  static const struct env_word words[] = {
      {"fatal", CHECK_FATAL}, {"warn", CHECK_WARN}, {"off", CHECK_OFF}};
  int mode = env_choice("SGC_PRELOAD_CHECK", words, ENV_WORDS_COUNT(words), CHECK_FATAL);
  if (mode == CHECK_OFF) return;
  struct check c = {0};
  const char *name;
  if (!find_self(&c, &name)) return;
  dl_iterate_phdr(find_libgc, &c);
  if (!c.libgc_base) return; /* nothing to bind to but sgc */
  dl_iterate_phdr(visit_object, &c);
  if (!c.list_len && !c.truncated) return;
  const char *what = "this program uses GC_ functions sgc does not provide, which would run "
                     "bdwgc's collector beside sgc (libgc is loaded too): %s%s. "
                     "SGC_PRELOAD_CHECK=warn runs it anyway";
  const char *more = c.truncated ? ", ..." : "";
  if (mode == CHECK_WARN) sgc_warn(what, c.list, more);
  else sgc_fatal(what, c.list, more);
}
