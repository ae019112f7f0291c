/* Heap snapshots read and written with stdio (snapshot_read.h). */
#include "snapshot_read.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool fail(char *error, size_t bytes, const char *path, const char *why) {
  snprintf(error, bytes, "%s: %s", path, why);
  return false;
}

bool snapshot_read(const char *path, struct snapshot *s, char *error, size_t error_bytes) {
  memset(s, 0, sizeof *s);
  FILE *f = fopen(path, "rb");
  if (!f) return fail(error, error_bytes, path, "cannot open it");
  struct snapshot_header *h = &s->header;
  bool ok = fread(h, sizeof *h, 1, f) == 1;
  if (!ok || memcmp(h->magic, SNAPSHOT_MAGIC, sizeof h->magic) != 0) {
    fclose(f);
    return fail(error, error_bytes, path, "not an sgc heap snapshot");
  }
  if (h->version < 1 || h->version > SNAPSHOT_VERSION || h->word_bytes != 8) {
    fclose(f);
    return fail(error, error_bytes, path, "unknown version or word size");
  }
  if (h->version >= 2 && fread(&s->wake, sizeof s->wake, 1, f) != 1) {
    fclose(f);
    return fail(error, error_bytes, path, "truncated");
  }
  if (h->roots > h->objects || h->objects > UINT32_MAX || h->edges > (1ull << 40)) {
    fclose(f);
    return fail(error, error_bytes, path, "counts out of range");
  }
  s->objects = malloc((h->objects ? h->objects : 1) * sizeof *s->objects);
  s->edges = malloc((h->edges ? h->edges : 1) * sizeof *s->edges);
  ok = s->objects && s->edges && fread(s->objects, sizeof *s->objects, h->objects, f) == h->objects &&
       fread(s->edges, sizeof *s->edges, h->edges, f) == h->edges;
  fclose(f);
  if (!ok) {
    snapshot_free(s);
    return fail(error, error_bytes, path, "truncated");
  }
  for (uint64_t i = 0; i < h->objects; i++) {
    const struct snapshot_object *o = &s->objects[i];
    if (o->first_edge > h->edges || o->edge_count > h->edges - o->first_edge || o->kind > SNAP_CUSTOM ||
        (o->kind == SNAP_ROOT) != (i < h->roots)) {
      snapshot_free(s);
      return fail(error, error_bytes, path, "an object record out of range");
    }
  }
  for (uint64_t e = 0; e < h->edges; e++)
    if (s->edges[e].target >= h->objects || s->edges[e].target < h->roots) {
      snapshot_free(s);
      return fail(error, error_bytes, path, "an edge to no object");
    }
  return true;
}

bool snapshot_write(const char *path, const struct snapshot *s) {
  FILE *f = fopen(path, "wb");
  if (!f) return false;
  struct snapshot_header h = s->header;
  h.version = SNAPSHOT_VERSION;
  bool ok = fwrite(&h, sizeof h, 1, f) == 1 && fwrite(&s->wake, sizeof s->wake, 1, f) == 1 &&
            fwrite(s->objects, sizeof *s->objects, s->header.objects, f) == s->header.objects &&
            fwrite(s->edges, sizeof *s->edges, s->header.edges, f) == s->header.edges;
  return fclose(f) == 0 && ok;
}

void snapshot_free(struct snapshot *s) {
  free(s->objects);
  free(s->edges);
  s->objects = NULL;
  s->edges = NULL;
}
