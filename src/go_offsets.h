/* Where Go's scheduler keeps what the time split reads of a running
 * goroutine (docs/ARCHITECTURE.md, "Where the time goes"): its M (g.m), the
 * M's P (m.p), the P's scheduler and system call ticks (p.schedtick,
 * p.syscalltick, side by side in every release), the M's count of
 * preemption signals (m.preemptGen), and from Go 1.26 on the goroutine's
 * count of transitions out of running (g.trackingSeq).  From the binary's
 * DWARF, else from a per-release table (amd64) that
 * tests/integration/goid-offsets.sh checks against every release's DWARF. */
#ifndef RETOP_GO_OFFSETS_H
#define RETOP_GO_OFFSETS_H

#include <stdint.h>

struct go_offsets {
	uint32_t g_m;		/* runtime.g.m: *m */
	uint32_t m_p;		/* runtime.m.p: puintptr */
	uint32_t p_schedtick;	/* runtime.p.schedtick: uint32, one more per goroutine
				 * the P starts (a handed-over time slice excepted) */
	uint32_t p_syscalltick; /* runtime.p.syscalltick: uint32, one more per system
				 * call of its goroutines; p_schedtick + 4 */
	uint32_t m_preempt;	/* runtime.m.preemptGen: uint32, one more per
				 * preemption signal the M handled */
	/* runtime.g.trackingSeq (uint8): 0 where it does not tell a park, as
	 * before Go 1.26, which counted every system call in it too. */
	uint32_t g_track;
	/* runtime.g.atomicstatus (uint32) and runtime.g.waitreason (uint8):
	 * why a goroutine Go's scheduler took off its thread is off
	 * (--time-split sched only). */
	uint32_t g_status, g_waitreason;
	int go_minor; /* 19 for go1.19.x; 0 unknown */
};

/* From the binary's DWARF: 0, -ENODATA when it has no DWARF or lacks one of
 * the members, or another -errno.  g_track is filled only where go_version
 * (the binary's, "go1.26.1") says it tells a park. */
int go_offsets_dwarf(const char *path, const char *go_version, struct go_offsets *out);
/* From the per-release table: 0, or -ENOENT for a release it does not know. */
int go_offsets_release(const char *go_version, struct go_offsets *out);
/* DWARF first, else the table; -ENOENT when neither knows.  *source: "DWARF"
 * or "the release table". */
int go_offsets_find(const char *path, const char *go_version, struct go_offsets *out,
		    const char **source);

#endif
