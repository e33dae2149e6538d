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

void bigmem_advise_inside(const void *p, size_t len, int advice)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t lo = ((uintptr_t)p + page - 1) & ~(page - 1);
	uintptr_t hi = ((uintptr_t)p + len) & ~(page - 1);

	if (hi > lo)
		(void)madvise((void *)lo, hi - lo, advice);
}

void *bigmem_calloc(size_t n, size_t size)
{
	void *p = calloc(n, size);

	/* calloc checked n * size for overflow. */
	if (!p || n * size < 2 * BIGMEM_HUGE)
		return p;
	/* The advice covers the allocation's own pages only, and those never
	 * touched stay unallocated.  The kernel may say no (THP off, or
	 * "never"): the pages stay small. */
	bigmem_advise_inside((char *)p + BIGMEM_SMALL, n * size - BIGMEM_SMALL, MADV_HUGEPAGE);
	return p;
}
