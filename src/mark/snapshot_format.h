/* The heap snapshot's file format (docs/prediction.md): what the marker
 * sees at a collection's start, for the slow predictor (tools/predict/).
 * Written by mark/snapshot.c, read by tools/predict/snapshot_read.c; the
 * byte order is the writer's (little-endian on x86-64). */
#ifndef SGC_SNAPSHOT_FORMAT_H
#define SGC_SNAPSHOT_FORMAT_H

#include <stdint.h>

#define SNAPSHOT_MAGIC "SGCSNAP1"
enum { SNAPSHOT_VERSION = 2 };

/* Object kinds: a root range (a stack, a data segment, an object queued
 * as a root), or a heap object the mark reached from the roots. */
enum snapshot_kind {
  SNAP_ROOT = 0,    /* scanned: a range the collection starts from */
  SNAP_SCANNED = 1, /* scanned conservatively (GC_malloc, uncollectable) */
  SNAP_ATOMIC = 2,  /* marked, never scanned (GC_malloc_atomic) */
  SNAP_CUSTOM = 3,  /* a program's kind: recorded as scanned conservatively */
};

/* 64 bytes, then (version 2) a struct snapshot_wake, then `objects`
 * records, then `edges` records.  Version 1 had no snapshot_wake. */
struct snapshot_header {
  char magic[8];        /* SNAPSHOT_MAGIC, no terminator */
  uint32_t version;     /* SNAPSHOT_VERSION */
  uint32_t word_bytes;  /* 8 */
  uint64_t page_bytes;  /* an object's page: address / page_bytes */
  uint64_t split_bytes; /* SGC_SPLIT_BYTES of the writing process (0: no splitting) */
  uint64_t objects;     /* records, root ranges first */
  uint64_t roots;       /* how many of them are SNAP_ROOT */
  uint64_t edges;
  uint32_t nodes;       /* memory nodes the objects' node fields name */
  uint32_t gc_no;       /* the collection it was taken at */
};

/* 32 bytes: how the collection's GC threads could join its mark.  A GC
 * thread the collector pre-woke (mark/parallel.c) on a CPU that nothing
 * ran on joins a CPU's wake-up after the pre-wake, so lead_ns before the
 * mark less (docs/prediction.md). */
struct snapshot_wake {
  uint64_t lead_ns;  /* from where the collector pre-wakes GC threads to the mark's start */
  uint32_t runnable; /* threads of the system running or ready then, the collector's included */
  uint32_t cpus;     /* CPUs the process may use; 0: runnable not known */
  uint64_t reserved[2]; /* 0 */
};

/* 32 bytes. */
struct snapshot_object {
  uint64_t address;
  uint64_t bytes;
  uint64_t first_edge; /* its edges: [first_edge, first_edge + edge_count) */
  uint32_t edge_count;
  uint8_t kind;        /* enum snapshot_kind */
  uint8_t node;        /* memory node of its first page (move_pages; 0: unknown) */
  uint16_t reserved;   /* 0 */
};

/* 8 bytes: the word at index `word` of the source holds a pointer that
 * finds object `target`, in the order the scan reads them. */
struct snapshot_edge {
  uint32_t word;
  uint32_t target;
};

_Static_assert(sizeof(struct snapshot_header) == 64, "snapshot header layout");
_Static_assert(sizeof(struct snapshot_wake) == 32, "snapshot wake layout");
_Static_assert(sizeof(struct snapshot_object) == 32, "snapshot object layout");
_Static_assert(sizeof(struct snapshot_edge) == 8, "snapshot edge layout");

#endif
