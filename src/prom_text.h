/* Pieces of the Prometheus text exposition format 0.0.4 that need care:
 * label values (which must be valid UTF-8) and exact decimal seconds. */
#ifndef RETOP_PROM_TEXT_H
#define RETOP_PROM_TEXT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* A label value, without the surrounding quotes.  Backslash, double quote
 * and newline are escaped as the format requires.  Bytes that are not valid
 * UTF-8 (a path or a symbol name is any bytes to the kernel), and the other
 * C0 controls and DEL, are written as the four characters \xNN (the
 * backslash itself escaped), so the value stays valid UTF-8, shows what
 * the byte was, and never moves a terminal's cursor. */
void prom_text_put_label(FILE *f, const char *v);

/* Exact decimal seconds from nanoseconds, without float rounding:
 * 991 -> "0.000000991", 2000000000 -> "2". */
void prom_text_put_seconds(FILE *f, uint64_t ns);
/* The same into buf; returns its length.  PROM_TEXT_SECONDS_LEN holds any. */
#define PROM_TEXT_SECONDS_LEN 32
size_t prom_text_seconds(char *buf, size_t len, uint64_t ns);

#endif
