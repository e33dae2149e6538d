#include "prom_text.h"

#include <inttypes.h>
#include <stddef.h>

/* Length of the valid UTF-8 sequence at s (1-4), or 0 when the bytes there
 * are not one: a stray continuation byte, a truncated sequence, an overlong
 * form, a UTF-16 surrogate, or a code point above U+10FFFF (RFC 3629). */
static size_t prom_text_utf8_len(const unsigned char *s)
{
	unsigned char c = s[0];
	size_t n;
	uint32_t cp, min;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf) {
		n = 2, cp = c & 0x1f, min = 0x80;
	} else if (c >= 0xe0 && c <= 0xef) {
		n = 3, cp = c & 0x0f, min = 0x800;
	} else if (c >= 0xf0 && c <= 0xf4) {
		n = 4, cp = c & 0x07, min = 0x10000;
	} else {
		return 0;
	}
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80) /* also stops at the terminating NUL */
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

void prom_text_put_label(FILE *f, const char *v)
{
	const unsigned char *s = (const unsigned char *)v;

	while (*s) {
		size_t n = prom_text_utf8_len(s);

		if (*s == '\\')
			fputs("\\\\", f);
		else if (*s == '"')
			fputs("\\\"", f);
		else if (*s == '\n')
			fputs("\\n", f);
		else if (n == 0 || *s < 0x20 || *s == 0x7f)
			fprintf(f, "\\\\x%02x", *s);
		else
			fwrite(s, 1, n, f);
		s += n ? n : 1;
	}
}

size_t prom_text_seconds(char *buf, size_t len, uint64_t ns)
{
	char frac[16];
	int n = snprintf(frac, sizeof(frac), "%09" PRIu64, ns % UINT64_C(1000000000));

	while (n > 0 && frac[n - 1] == '0')
		frac[--n] = '\0';
	n = snprintf(buf, len, "%" PRIu64 "%s%s", ns / UINT64_C(1000000000), n ? "." : "", frac);
	return n < 0 ? 0 : (size_t)n;
}

void prom_text_put_seconds(FILE *f, uint64_t ns)
{
	char buf[PROM_TEXT_SECONDS_LEN];

	prom_text_seconds(buf, sizeof(buf), ns);
	fputs(buf, f);
}
