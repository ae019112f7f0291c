/* Reading (and, for tests and tools, writing) heap snapshots in the
 * format of src/mark/snapshot_format.h (docs/prediction.md). */
#ifndef SGC_SNAPSHOT_READ_H
#define SGC_SNAPSHOT_READ_H

#include <stdbool.h>
#include <stddef.h>

#include "mark/snapshot_format.h"

struct snapshot {
  struct snapshot_header header;
  struct snapshot_wake wake; /* all 0 in a version-1 snapshot */
  struct snapshot_object *objects; /* header.objects of them */
  struct snapshot_edge *edges;     /* header.edges */
};

/* Reads and checks PATH (magic, version 1 or 2, sizes, every edge's range);
 * false with ERROR filled when it is not a valid snapshot. */
bool snapshot_read(const char *path, struct snapshot *s, char *error, size_t error_bytes);
/* Writes S to PATH as version SNAPSHOT_VERSION; false on an I/O error. */
bool snapshot_write(const char *path, const struct snapshot *s);
void snapshot_free(struct snapshot *s);

#endif
