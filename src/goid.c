#include "goid.h"

#include <dwarf.h>
#include <errno.h>
#include <fcntl.h>
#include <libdwarf.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* The goid member of a runtime.g DIE, or -ENODATA. */
static int goid_member(Dwarf_Debug dbg, Dwarf_Die g, uint64_t *off)
{
	Dwarf_Die m = NULL, next;
	int rc = -ENODATA;

	if (dwarf_child(g, &m, NULL) != DW_DLV_OK)
		return rc;
	while (m) {
		char *name = NULL;
		Dwarf_Attribute at;
		Dwarf_Unsigned v;

		if (dwarf_diename(m, &name, NULL) == DW_DLV_OK && strcmp(name, "goid") == 0 &&
		    dwarf_attr(m, DW_AT_data_member_location, &at, NULL) == DW_DLV_OK) {
			if (dwarf_formudata(at, &v, NULL) == DW_DLV_OK) {
				*off = v;
				rc = 0;
			}
			dwarf_dealloc_attribute(at);
		}
		if (!rc || dwarf_siblingof_b(dbg, m, true, &next, NULL) != DW_DLV_OK)
			next = NULL;
		dwarf_dealloc_die(m);
		m = next;
	}
	return rc;
}

/* runtime.g among the top-level DIEs of one unit. */
static int goid_in_cu(Dwarf_Debug dbg, Dwarf_Die cu, uint64_t *off)
{
	Dwarf_Die d = NULL, next;
	int rc = -ENODATA;

	if (dwarf_child(cu, &d, NULL) != DW_DLV_OK)
		return rc;
	while (d) {
		Dwarf_Half tag;
		char *name = NULL;

		if (dwarf_tag(d, &tag, NULL) == DW_DLV_OK && tag == DW_TAG_structure_type &&
		    dwarf_diename(d, &name, NULL) == DW_DLV_OK && strcmp(name, "runtime.g") == 0)
			rc = goid_member(dbg, d, off);
		if (!rc || dwarf_siblingof_b(dbg, d, true, &next, NULL) != DW_DLV_OK)
			next = NULL;
		dwarf_dealloc_die(d);
		d = next;
	}
	return rc;
}

int goid_offset_dwarf(const char *path, uint64_t *off)
{
	Dwarf_Debug dbg = NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC), rc = -ENODATA;

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
		if (rc && dwarf_siblingof_b(dbg, NULL, true, &cu, NULL) == DW_DLV_OK) {
			rc = goid_in_cu(dbg, cu, off);
			dwarf_dealloc_die(cu);
		}
	}
	dwarf_finish(dbg, NULL);
	close(fd);
	return rc;
}

/* amd64 offsets of runtime.g's goid, checked against each release's DWARF
 * by tests/integration/goid-offsets.sh: Go 1.23 added g.syscallbp before
 * it, and Go 1.25 moved fields out from before it again. */
static const struct {
	int minor_lo, minor_hi;
	uint64_t off;
} goid_table[] = {
    {17, 22, 152},
    {23, 24, 160},
    {25, 27, 152},
};

int goid_offset_release(const char *go_version, uint64_t *off)
{
	int major, minor;

	if (!go_version || sscanf(go_version, "go%d.%d", &major, &minor) != 2 || major != 1)
		return -ENOENT;
	for (size_t i = 0; i < sizeof(goid_table) / sizeof(goid_table[0]); i++)
		if (minor >= goid_table[i].minor_lo && minor <= goid_table[i].minor_hi) {
			*off = goid_table[i].off;
			return 0;
		}
	return -ENOENT;
}

int goid_offset(const char *path, const char *go_version, uint64_t *off)
{
	if (goid_offset_dwarf(path, off) == 0)
		return 0;
	return goid_offset_release(go_version, off);
}
