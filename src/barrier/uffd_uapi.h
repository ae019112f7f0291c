/* The userfaultfd and PAGEMAP_SCAN interface of Linux 6.4 and 6.7, where
 * the system's headers are older (Debian 12's are 6.1's): for uffd.c and
 * tools/dev/uffd_costs.c.  Include <linux/userfaultfd.h> and
 * <sys/ioctl.h> first. */
#ifndef SGC_BARRIER_UFFD_UAPI_H
#define SGC_BARRIER_UFFD_UAPI_H

#include <stdint.h>

#ifndef UFFD_FEATURE_WP_UNPOPULATED
#define UFFD_FEATURE_WP_UNPOPULATED (1 << 13)
#endif
#ifndef UFFD_FEATURE_WP_ASYNC
#define UFFD_FEATURE_WP_ASYNC (1 << 15)
#endif
#ifndef UFFD_USER_MODE_ONLY
#define UFFD_USER_MODE_ONLY 1
#endif
#ifndef PAGEMAP_SCAN
struct page_region {
  uint64_t start, end, categories;
};
struct pm_scan_arg {
  uint64_t size, flags, start, end, walk_end, vec, vec_len, max_pages;
  uint64_t category_inverted, category_mask, category_anyof_mask, return_mask;
};
#define PAGEMAP_SCAN _IOWR('f', 16, struct pm_scan_arg)
#define PAGE_IS_WRITTEN (1 << 1)
#define PM_SCAN_WP_MATCHING (1 << 0)
#define PM_SCAN_CHECK_WPASYNC (1 << 1)
#endif

#endif
