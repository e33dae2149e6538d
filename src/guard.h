/* Guardrails for production: how long tracing may run (auto-detach) and how
 * much memory it takes (stated, and capped by --max-memory).  The session
 * keeps a struct guard and asks it once a refresh whether time is up. */
#ifndef RETOP_GUARD_H
#define RETOP_GUARD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* RFD 061: tracing stops by itself after 10 minutes unless told otherwise. */
#define GUARD_DEFAULT_MAX_DURATION_S 600.0
#define GUARD_MAX_DURATION_LIMIT_S (7 * 86400.0)

struct guard {
	double max_duration_s; /* 0: no limit */
	uint64_t deadline_ns;  /* clock_now_ns() clock; 0: no limit */
	bool expired;	       /* the deadline passed and the probes were removed */
	size_t auto_detached;  /* functions detached because time was up */
};

/* Arm the deadline max_s seconds after now_ns (0: none). */
void guard_arm(struct guard *g, double max_s, uint64_t now_ns);
/* Push the deadline max_duration_s further (from now if it had passed). */
void guard_extend(struct guard *g, uint64_t now_ns);
/* Seconds left before auto-detach; negative when there is no limit. */
double guard_remaining_s(const struct guard *g, uint64_t now_ns);
/* True once, when the deadline has just passed: the caller detaches. */
bool guard_due(struct guard *g, uint64_t now_ns);

/* retop's own resident memory (VmRSS), 0 if unknown.  The BPF maps' is
 * bpf_mem's. */
uint64_t guard_rss_bytes(void);
/* "64M", "1.5G", "512K", "1048576": bytes (K, M, G are powers of 1024).
 * Returns false on anything else. */
bool guard_parse_size(const char *s, uint64_t *out);
/* A positive, finite number at the start of s; *unit is what follows it. */
bool guard_parse_number(const char *s, double *v, const char **unit);
/* "38.2 MiB" */
void guard_format_bytes(uint64_t bytes, char *buf, size_t len);
/* "9:58" or "1:02:03" */
void guard_format_remaining(double s, char *buf, size_t len);

#endif
