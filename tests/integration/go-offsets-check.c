/* go-offsets-check BINARY: the offsets the time split reads in Go's
 * runtime (src/go_offsets.h) from BINARY's DWARF, and the per-release
 * table's for its Go version; exit 0 when they agree, 1 when they differ or
 * either is missing. */
#include <stdio.h>

#include "../../src/elf_image.h"
#include "../../src/go_offsets.h"
#include "../../src/log.h"

int main(int argc, char **argv)
{
	struct elf_image *img;
	struct go_offsets dw = {0}, tab = {0};
	char err[ERR_LEN];
	int rd, rt;

	if (argc != 2) {
		fprintf(stderr, "usage: go-offsets-check BINARY\n");
		return 2;
	}
	if (elf_image_open(argv[1], &img, err) != 0) {
		fprintf(stderr, "go-offsets-check: %s\n", err);
		return 1;
	}
	const char *ver = elf_image_go_version(img);
	rd = go_offsets_dwarf(argv[1], ver, &dw);
	rt = go_offsets_release(ver, &tab);
	printf("%s: %s g.m %u/%u m.p %u/%u p.schedtick %u/%u m.preemptGen %u/%u "
	       "g.trackingSeq %u/%u g.atomicstatus %u/%u g.waitreason %u/%u (DWARF/table)\n",
	       argv[1], ver, dw.g_m, tab.g_m, dw.m_p, tab.m_p, dw.p_schedtick, tab.p_schedtick,
	       dw.m_preempt, tab.m_preempt, dw.g_track, tab.g_track, dw.g_status, tab.g_status,
	       dw.g_waitreason, tab.g_waitreason);
	elf_image_close(img);
	return rd || rt || dw.g_m != tab.g_m || dw.m_p != tab.m_p ||
	       dw.p_schedtick != tab.p_schedtick || dw.p_syscalltick != tab.p_syscalltick ||
	       dw.m_preempt != tab.m_preempt || dw.g_track != tab.g_track ||
	       dw.g_status != tab.g_status || dw.g_waitreason != tab.g_waitreason;
}
