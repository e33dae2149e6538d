/* Offsets into Go's runtime structures for the time split (go_offsets.h). */
#include "go_offsets.h"

#include <dwarf.h>
#include <errno.h>
#include <fcntl.h>
#include <libdwarf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* The members the split reads: struct, member, where the offset goes. */
struct go_member {
	const char *type, *name;
	size_t field; /* offsetof(struct go_offsets, ...) */
	bool found;
};

/* Go releases whose trackingSeq counts only a goroutine's leaving running
 * (or a system call) for anything else: from Go 1.26 on. */
#define GO_TRACK_MINOR 26

static int go_minor_of(const char *go_version)
{
	int major, minor;

	if (!go_version || sscanf(go_version, "go%d.%d", &major, &minor) != 2 || major != 1)
		return 0;
	return minor;
}

static void go_member_set(struct go_offsets *o, struct go_member *m, Dwarf_Unsigned v)
{
	*(uint32_t *)((char *)o + m->field) = (uint32_t)v;
	m->found = true;
}

/* The members of a struct DIE named type that the list wants. */
static void go_members_of(Dwarf_Debug dbg, Dwarf_Die st, const char *type, struct go_member *want,
			  size_t n, struct go_offsets *o)
{
	Dwarf_Die m = NULL, next;

	if (dwarf_child(st, &m, NULL) != DW_DLV_OK)
		return;
	while (m) {
		char *name = NULL;
		Dwarf_Attribute at;
		Dwarf_Unsigned v;

		if (dwarf_diename(m, &name, NULL) == DW_DLV_OK)
			for (size_t i = 0; i < n; i++) {
				if (want[i].found || strcmp(want[i].type, type) ||
				    strcmp(want[i].name, name))
					continue;
				if (dwarf_attr(m, DW_AT_data_member_location, &at, NULL) !=
				    DW_DLV_OK)
					continue;
				if (dwarf_formudata(at, &v, NULL) == DW_DLV_OK)
					go_member_set(o, &want[i], v);
				dwarf_dealloc_attribute(at);
			}
		if (dwarf_siblingof_b(dbg, m, true, &next, NULL) != DW_DLV_OK)
			next = NULL;
		dwarf_dealloc_die(m);
		m = next;
	}
}

/* runtime.g, runtime.m and runtime.p among the top-level DIEs of a unit. */
static void go_members_in_cu(Dwarf_Debug dbg, Dwarf_Die cu, struct go_member *want, size_t n,
			     struct go_offsets *o)
{
	Dwarf_Die d = NULL, next;

	if (dwarf_child(cu, &d, NULL) != DW_DLV_OK)
		return;
	while (d) {
		Dwarf_Half tag;
		char *name = NULL;

		if (dwarf_tag(d, &tag, NULL) == DW_DLV_OK && tag == DW_TAG_structure_type &&
		    dwarf_diename(d, &name, NULL) == DW_DLV_OK &&
		    (!strcmp(name, "runtime.g") || !strcmp(name, "runtime.m") ||
		     !strcmp(name, "runtime.p")))
			go_members_of(dbg, d, name, want, n, o);
		if (dwarf_siblingof_b(dbg, d, true, &next, NULL) != DW_DLV_OK)
			next = NULL;
		dwarf_dealloc_die(d);
		d = next;
	}
}

static bool go_members_all(const struct go_member *want, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!want[i].found)
			return false;
	return true;
}

int go_offsets_dwarf(const char *path, const char *go_version, struct go_offsets *out)
{
	struct go_member want[] = {
	    {"runtime.g", "m", offsetof(struct go_offsets, g_m), false},
	    {"runtime.m", "p", offsetof(struct go_offsets, m_p), false},
	    {"runtime.p", "schedtick", offsetof(struct go_offsets, p_schedtick), false},
	    {"runtime.m", "preemptGen", offsetof(struct go_offsets, m_preempt), false},
	    {"runtime.p", "syscalltick", offsetof(struct go_offsets, p_syscalltick), false},
	    {"runtime.g", "trackingSeq", offsetof(struct go_offsets, g_track), false},
	    {"runtime.g", "atomicstatus", offsetof(struct go_offsets, g_status), false},
	    {"runtime.g", "waitreason", offsetof(struct go_offsets, g_waitreason), false},
	};
	size_t n = sizeof(want) / sizeof(want[0]);
	struct go_offsets o = {.go_minor = go_minor_of(go_version)};
	Dwarf_Debug dbg = NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (dwarf_init_b(fd, DW_DLC_READ, DW_GROUPNUMBER_ANY, NULL, NULL, &dbg, NULL) !=
	    DW_DLV_OK) {
		close(fd);
		return -ENODATA;
	}
	for (;;) {
		Dwarf_Unsigned hdr_len, typeoff, next_off;
		Dwarf_Half version, addr_size, len_size, ext_size, cu_type;
		Dwarf_Off abbrev_off;
		Dwarf_Sig8 sig;
		Dwarf_Die cu = NULL;

		if (dwarf_next_cu_header_d(dbg, true, &hdr_len, &version, &abbrev_off, &addr_size,
					   &len_size, &ext_size, &sig, &typeoff, &next_off,
					   &cu_type, NULL) != DW_DLV_OK)
			break;
		/* Every unit is walked: libdwarf reads the headers in order. */
		if (!go_members_all(want, n) &&
		    dwarf_siblingof_b(dbg, NULL, true, &cu, NULL) == DW_DLV_OK) {
			go_members_in_cu(dbg, cu, want, n, &o);
			dwarf_dealloc_die(cu);
		}
	}
	dwarf_finish(dbg, NULL);
	close(fd);
	/* trackingSeq is optional: before Go 1.26 it is not read at all. */
	/* BPF reads both of the P's ticks at once. */
	if (!want[0].found || !want[1].found || !want[2].found || !want[3].found ||
	    !want[4].found || o.p_syscalltick != o.p_schedtick + 4)
		return -ENODATA;
	if (!want[5].found || o.go_minor < GO_TRACK_MINOR)
		o.g_track = 0;
	/* The scheduler's wait reasons go together or not at all. */
	if (!want[6].found || !want[7].found)
		o.g_status = o.g_waitreason = 0;
	*out = o;
	return 0;
}

/* amd64 offsets (p.syscalltick is 4 after p.schedtick), each release
 * checked against its DWARF by
 * tests/integration/goid-offsets.sh (not 1.20: Debian has no build of it,
 * and runtime.m grew between 1.19 and 1.21).  Go 1.25 moved fields out of
 * runtime.m before p, and Go 1.26 back in; trackingSeq is read from Go
 * 1.26 on only. */
static const struct {
	int minor_lo, minor_hi;
	uint32_t g_m, m_p, p_schedtick, m_preempt, g_track, g_status, g_waitreason;
} go_offsets_table[] = {
    {19, 19, 48, 208, 16, 816, 0, 144, 176},   {21, 21, 48, 208, 16, 824, 0, 144, 176},
    {22, 22, 48, 208, 16, 1136, 0, 144, 176},  {23, 23, 48, 208, 16, 872, 0, 152, 184},
    {24, 24, 48, 208, 16, 896, 0, 152, 184},   {25, 25, 48, 200, 16, 912, 0, 144, 176},
    {26, 27, 48, 208, 16, 912, 191, 144, 176},
};

int go_offsets_release(const char *go_version, struct go_offsets *out)
{
	int minor = go_minor_of(go_version);

	for (size_t i = 0; i < sizeof(go_offsets_table) / sizeof(go_offsets_table[0]); i++)
		if (minor >= go_offsets_table[i].minor_lo &&
		    minor <= go_offsets_table[i].minor_hi) {
			*out = (struct go_offsets){
			    .g_m = go_offsets_table[i].g_m,
			    .m_p = go_offsets_table[i].m_p,
			    .p_schedtick = go_offsets_table[i].p_schedtick,
			    .p_syscalltick = go_offsets_table[i].p_schedtick + 4,
			    .m_preempt = go_offsets_table[i].m_preempt,
			    .g_track = go_offsets_table[i].g_track,
			    .g_status = go_offsets_table[i].g_status,
			    .g_waitreason = go_offsets_table[i].g_waitreason,
			    .go_minor = minor,
			};
			return 0;
		}
	return -ENOENT;
}

int go_offsets_find(const char *path, const char *go_version, struct go_offsets *out,
		    const char **source)
{
	if (go_offsets_dwarf(path, go_version, out) == 0) {
		*source = "DWARF";
		return 0;
	}
	*source = "the release table";
	return go_offsets_release(go_version, out);
}
