/* Size classes.  Up to 256 bytes every granule multiple is a class; above
 * that a class is the largest 16-byte multiple that fits n objects in a
 * page (n = 15 .. 2), so no page wastes more than one granule per object
 * beyond the remainder of 4096 / n. */
#include "heap/layout.h"

#include "common.h"

const uint16_t size_class_bytes[SIZE_CLASS_COUNT] = {
    16,  32,  48,  64,  80,  96,  112, 128, 144, 160,  176,  192,  208,  224, 240,
    256, 272, 288, 304, 336, 368, 400, 448, 512, 576, 672, 816, 1024, 1360, 2048};

uint8_t size_class_of_granules[MAX_SMALL_GRANULES + 1];

void size_classes_init(void) {
  unsigned cls = 0;
  /* A request of 0 bytes gets the smallest class (a unique object). */
  size_class_of_granules[0] = 0;
  for (unsigned g = 1; g <= MAX_SMALL_GRANULES; g++) {
    while (size_class_bytes[cls] < g * GRANULE_BYTES) cls++;
    SGC_ASSERT(cls < SIZE_CLASS_COUNT);
    size_class_of_granules[g] = (uint8_t)cls;
  }
}
