/* Package paths of Go symbol names (see pkgpath.h for the cases). */
#include "pkgpath.h"

#include <string.h>

size_t pkgpath_len(const char *name)
{
	size_t end = strcspn(name, "([{ *,"), slash = 0;

	/* Compiler-made: "type:" since Go 1.20, "type.." before. */
	if (!strncmp(name, "type:", 5) || !strncmp(name, "type..", 6))
		return 4;
	if (!strncmp(name, "go:", 3))
		return 2;
	for (size_t i = 0; i < end; i++)
		if (name[i] == '/')
			slash = i + 1;
	for (size_t i = slash; i < end; i++)
		if (name[i] == '.')
			return i;
	return 0;
}

void pkgpath_display(const char *name, size_t len, char *buf, size_t size)
{
	size_t o = 0;

	if (size == 0)
		return;
	for (size_t i = 0; i < len && o + 1 < size; i++) {
		if (name[i] == '%' && i + 2 < len && !strncmp(name + i, "%2e", 3)) {
			buf[o++] = '.';
			i += 2;
			continue;
		}
		buf[o++] = name[i];
	}
	buf[o] = '\0';
}
