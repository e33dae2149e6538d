/* Per-function arrays on huge pages (bigmem.h). */
#include "bigmem.h"

#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

/* Under this, no 2 MiB page fits inside the allocation. */
#define BIGMEM_HUGE (2u << 20)
/* Its first part stays on small pages: a session of a few functions (up
 * to some 80) touches a few KiB of it, not a huge page for each array. */
#define BIGMEM_SMALL (512u << 10)

void *bigmem_calloc(size_t n, size_t size)
{
	void *p = calloc(n, size);

	if (!p || size == 0 || n > SIZE_MAX / size || n * size < 2 * BIGMEM_HUGE)
		return p;
	/* The advice covers the allocation's own pages only, and those never
	 * touched stay unallocated.  The kernel may say no (THP off, or
	 * "never"): the pages stay small. */
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t start = ((uintptr_t)p + BIGMEM_SMALL + page - 1) & ~(page - 1);
	uintptr_t end = ((uintptr_t)p + n * size) & ~(page - 1);
	if (end > start)
		(void)madvise((void *)start, end - start, MADV_HUGEPAGE);
	return p;
}
