/* Bytes read from the target (string arguments, names, paths), made safe
 * for a terminal and for a line-oriented text output: nothing the target
 * sends may move the cursor, set a title or the clipboard, or forge a line.
 * JSON (json-c escapes) and the dashboard (ncurses draws control bytes
 * visibly) do not need it. */
#ifndef RETOP_TEXT_ESCAPE_H
#define RETOP_TEXT_ESCAPE_H

#include <stdbool.h>
#include <stddef.h>

/* Write in[0..n) to out (len bytes, NUL-terminated, cut on a whole escape):
 * control bytes, DEL, C1 controls and bytes that are not UTF-8 as \xNN (\n,
 * \r, \t by name), a backslash as \\, and with quote a double quote as \".
 * Returns the length written. */
size_t text_escape(const char *in, size_t n, bool quote, char *out, size_t len);

/* The same for a NUL-terminated string, into a static-free caller buffer. */
const char *text_escape_str(const char *in, char *out, size_t len);

#endif
