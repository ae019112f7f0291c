/* dso_lib: a shared library that knows nothing about the collector and
 * keeps pointers it is given in its own .data and .bss (used by
 * dso_roots.c, linked at start-up and also dlopen()ed as a second copy). */
#include <stddef.h>

#define SLOTS 64
static void *dso_bss_slots[SLOTS]; /* static: no interposition */
static void *dso_data_slots[SLOTS] = {(void *)1}; /* nonzero: .data */

void dso_store(int i, void *p)
{
    if (i < SLOTS)
        dso_bss_slots[i] = p;
    else
        dso_data_slots[i - SLOTS] = p;
}

void *dso_load(int i)
{
    return i < SLOTS ? dso_bss_slots[i] : dso_data_slots[i - SLOTS];
}

int dso_slots(void)
{
    return 2 * SLOTS;
}
