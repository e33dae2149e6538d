#include "error_types.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "elf_image.h"
#include "text_escape.h"

/* Go's abi.Type: TFlag and Str (a NameOff from the module's types). */
#define TYPE_TFLAG_OFFSET 20
#define TYPE_STR_OFFSET 40
#define TYPE_DESC_BYTES 48
#define TFLAG_EXTRA_STAR 0x2

int error_types_decode(const uint8_t *bytes, size_t n, uint64_t off, uint8_t tflag, char *buf,
		       size_t len)
{
	uint64_t nlen = 0;
	size_t p;

	if (!len)
		return -EINVAL;
	buf[0] = '\0';
	if (off >= n)
		return -EINVAL;
	/* The flags byte, then the length: a varint of at most 3 bytes here. */
	p = (size_t)off + 1;
	for (unsigned shift = 0; shift < 21; shift += 7) {
		if (p >= n)
			return -EINVAL;
		nlen |= (uint64_t)(bytes[p] & 0x7F) << shift;
		if (!(bytes[p++] & 0x80))
			break;
		if (shift == 14)
			return -EINVAL;
	}
	if (!nlen || nlen > n - p)
		return -EINVAL;
	const char *s = (const char *)bytes + p;
	if ((tflag & TFLAG_EXTRA_STAR) && s[0] == '*') {
		s++;
		nlen--;
	}
	/* The target's bytes: escaped for a terminal, JSON and /metrics. */
	text_escape(s, (size_t)nlen, false, buf, len);
	return 0;
}

/* idx's types range, read once. */
static void error_types_module(struct error_types *et, const struct func_index *idx,
			       uint64_t *types, uint64_t *etypes)
{
	const uint8_t *tab;
	size_t tab_size, i;
	char err[256];

	*types = *etypes = 0;
	for (i = 0; i < et->nmods; i++)
		if (et->mods[i].idx == idx) {
			*types = et->mods[i].types;
			*etypes = et->mods[i].etypes;
			return;
		}
	if (elf_image_find_pclntab(idx->img, &tab, &tab_size, err) == 0)
		elf_image_types(idx->img, tab, tab_size, types, etypes);
	if (et->nmods < RETOP_MAX_IMAGES)
		et->mods[et->nmods++] = (typeof(et->mods[0])){idx, *types, *etypes};
}

static void error_types_read(struct error_types *et, const struct func_index *idx, uint64_t link,
			     char *buf, size_t len)
{
	uint64_t types, etypes;
	const uint8_t *d, *all;
	int32_t str;

	snprintf(buf, len, "?");
	error_types_module(et, idx, &types, &etypes);
	if (!types || link < types || link >= etypes || etypes - link < TYPE_DESC_BYTES)
		return;
	d = elf_image_bytes(idx->img, link, TYPE_DESC_BYTES);
	all = elf_image_bytes(idx->img, types, etypes - types);
	if (!d || !all)
		return;
	memcpy(&str, d + TYPE_STR_OFFSET, sizeof(str));
	if (str < 0 || error_types_decode(all, etypes - types, (uint64_t)str, d[TYPE_TFLAG_OFFSET],
					  buf, len) != 0)
		snprintf(buf, len, "?");
}

void error_types_name(struct error_types *et, const struct func_index *idx, uint64_t addr,
		      uint64_t bias, char *buf, size_t len)
{
	for (size_t i = 0; i < et->nseen; i++)
		if (et->seen[i].idx == idx && et->seen[i].addr == addr) {
			snprintf(buf, len, "%s", et->seen[i].name);
			return;
		}
	if (!idx || addr < bias) {
		snprintf(buf, len, "?");
		return;
	}
	error_types_read(et, idx, addr - bias, buf, len);
	if (et->nseen < ERROR_TYPES_CACHE) {
		et->seen[et->nseen].idx = idx;
		et->seen[et->nseen].addr = addr;
		snprintf(et->seen[et->nseen].name, sizeof(et->seen[0].name), "%s", buf);
		et->nseen++;
	}
}
