/* goid-check BINARY: the offset of goid in runtime.g from BINARY's DWARF,
 * and the per-release table's for its Go version; exit 0 when they agree,
 * 1 when they differ or either is missing. */
#include <stdio.h>

#include "../../src/elf_image.h"
#include "../../src/goid.h"
#include "../../src/log.h"

int main(int argc, char **argv)
{
	struct elf_image *img;
	char err[ERR_LEN];
	uint64_t dw = 0, tab = 0;
	int rd, rt;

	if (argc != 2) {
		fprintf(stderr, "usage: goid-check BINARY\n");
		return 2;
	}
	if (elf_image_open(argv[1], &img, err) != 0) {
		fprintf(stderr, "goid-check: %s\n", err);
		return 1;
	}
	rd = goid_offset_dwarf(argv[1], &dw);
	rt = goid_offset_release(elf_image_go_version(img), &tab);
	printf("%s: %s goid at %llu in DWARF, %llu in the table\n", argv[1],
	       elf_image_go_version(img), rd ? 0ull : (unsigned long long)dw,
	       rt ? 0ull : (unsigned long long)tab);
	elf_image_close(img);
	return rd || rt || dw != tab;
}
