/* The per-function arrays a session and its faces keep for every slot
 * (RETOP_MAX_FUNCS entries of several KiB each), on huge pages where the
 * kernel gives them; advice on the whole pages of a range. */
#ifndef RETOP_BIGMEM_H
#define RETOP_BIGMEM_H

#include <stddef.h>

/* calloc(n, size), whose pages the kernel may back with huge ones
 * (transparent huge pages, madvise mode); freed with free().  A scan over
 * a thousand functions' entries, one every 6-7 KiB, missed the TLB at
 * each one on 4 KiB pages. */
void *bigmem_calloc(size_t n, size_t size);
/* madvise(advice) on the whole pages inside [p, p + len) only: the pages
 * it shares with a neighbour are left alone. */
void bigmem_advise_inside(const void *p, size_t len, int advice);

#endif
