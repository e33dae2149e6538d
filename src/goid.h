/* Where a goroutine's id lives: the offset of `goid` in runtime.g, read to
 * report which goroutine made a slow call. */
#ifndef RETOP_GOID_H
#define RETOP_GOID_H

#include <stdint.h>

/* From the binary's DWARF (struct runtime.g, member goid): 0, -ENODATA
 * when the binary has no DWARF or no such member, or another -errno. */
int goid_offset_dwarf(const char *path, uint64_t *off);
/* From the per-release table (amd64), for a Go version string such as
 * "go1.22.5": 0, or -ENOENT for a release the table does not know. */
int goid_offset_release(const char *go_version, uint64_t *off);
/* DWARF first, else the table; -ENOENT when neither knows. */
int goid_offset(const char *path, const char *go_version, uint64_t *off);

#endif
