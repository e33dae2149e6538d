#include "text_escape.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* Length of the UTF-8 sequence at p (at most n bytes) if it is valid and
 * not a C1 control (U+0080-U+009F, which terminals may act on), else 0. */
static size_t utf8_len(const unsigned char *p, size_t n)
{
	size_t len = p[0] >= 0xF0 ? 4 : p[0] >= 0xE0 ? 3 : p[0] >= 0xC2 ? 2 : 0;
	uint32_t cp;

	if (!len || p[0] > 0xF4 || len > n)
		return 0;
	for (size_t i = 1; i < len; i++)
		if ((p[i] & 0xC0) != 0x80)
			return 0;
	if (len == 2)
		cp = (uint32_t)(p[0] & 0x1F) << 6 | (p[1] & 0x3F);
	else if (len == 3)
		cp = (uint32_t)(p[0] & 0x0F) << 12 | (uint32_t)(p[1] & 0x3F) << 6 | (p[2] & 0x3F);
	else
		cp = (uint32_t)(p[0] & 0x07) << 18 | (uint32_t)(p[1] & 0x3F) << 12 |
		     (uint32_t)(p[2] & 0x3F) << 6 | (p[3] & 0x3F);
	/* Overlong forms, surrogates, past U+10FFFF, and C1 controls. */
	if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)) ||
	    (cp >= 0xD800 && cp <= 0xDFFF) || (cp >= 0x80 && cp <= 0x9F))
		return 0;
	return len;
}

size_t text_escape(const char *in, size_t n, bool quote, char *out, size_t len)
{
	const unsigned char *p = (const unsigned char *)in;
	size_t o = 0;

	if (!len)
		return 0;
	for (size_t i = 0; i < n;) {
		char esc[8];
		size_t k = 1, u;
		const char *put = esc;
		if (p[i] == '\\' || (quote && p[i] == '"'))
			snprintf(esc, sizeof(esc), "\\%c", p[i]);
		else if (p[i] == '\n' || p[i] == '\r' || p[i] == '\t')
			snprintf(esc, sizeof(esc), "\\%c", p[i] == '\n' ? 'n' : p[i] == '\r' ? 'r' : 't');
		else if (p[i] < 0x20 || p[i] == 0x7F)
			snprintf(esc, sizeof(esc), "\\x%02x", p[i]);
		else if (p[i] < 0x80) {
			esc[0] = (char)p[i];
			esc[1] = '\0';
		} else if ((u = utf8_len(p + i, n - i))) {
			put = (const char *)p + i;
			k = u;
		} else
			snprintf(esc, sizeof(esc), "\\x%02x", p[i]);
		size_t m = put == esc ? strlen(esc) : k;
		if (o + m >= len)
			break; /* whole escapes only */
		memcpy(out + o, put, m);
		o += m;
		i += k;
	}
	out[o] = '\0';
	return o;
}

const char *text_escape_str(const char *in, char *out, size_t len)
{
	text_escape(in ? in : "", in ? strlen(in) : 0, false, out, len);
	return out;
}
