/* Client of the in-process Go SDK that serves function metadata over HTTP.
 *
 * The SDK is an untrusted peer (docs/ARCHITECTURE.md): every response is
 * size-capped and parsed strictly, and an SDK offset is only ever used after
 * sdk_client_check() found it equal to the local index's own fact.  Every
 * failure is one status line in err ("SDK at URL unreachable (...): using the
 * binary's own tables"); callers then keep the local index.
 *
 * Endpoints (contract with sdk/go):
 *   GET /debug/functions/export        JSON lines, one function per line
 *   GET /debug/runtime/validate?func=N one object (RFD 075)
 * with "Authorization: Bearer $RETOP_SDK_TOKEN" when that variable is set.
 */
#ifndef RETOP_SDK_CLIENT_H
#define RETOP_SDK_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "funcs.h"

#define SDK_DEFAULT_PORT 9002
#define SDK_DEFAULT_URL "http://127.0.0.1:9002"
#define SDK_TOKEN_ENV "RETOP_SDK_TOKEN"

struct sdk_client;

struct sdk_client_opts {
	long connect_timeout_ms; /* 0: 1000 */
	long total_timeout_ms;	 /* 0: 5000; the budget of all attempts together */
	unsigned attempts;	 /* 0: 3; retries on connect errors, timeouts, 5xx */
	size_t export_cap;	 /* 0: 64 MiB */
	size_t object_cap;	 /* 0: 1 MiB */
	const char *token;	 /* NULL: $RETOP_SDK_TOKEN (or none) */
};

/* One function as the SDK describes it.  entry is the link-time virtual
 * address (as in the ELF), address the runtime one, offset the file offset
 * where the entry uprobe would attach. */
struct sdk_func {
	char *name;
	uint64_t address;
	uint64_t entry;
	uint64_t offset;
	uint64_t size; /* valid when has_size */
	bool has_size;
	char *file; /* "" when the SDK sent none */
	uint64_t line;
};

enum sdk_loc_kind { SDK_LOC_NONE = 0, SDK_LOC_REGISTER, SDK_LOC_STACK };

struct sdk_arg {
	char *name;
	char *type;
	uint64_t size;
	enum sdk_loc_kind loc;
	uint64_t loc_value; /* register number, or stack offset from SP */
};

/* /debug/runtime/validate: the function facts, plus inlining and the ABI
 * locations of arguments and results. */
struct sdk_validation {
	struct sdk_func func;
	bool is_inlined;
	struct sdk_arg *args;
	size_t nargs;
	struct sdk_arg *rets;
	size_t nrets;
};

/* What the last transfer did: for tests and -v. */
struct sdk_client_stats {
	uint64_t bytes;	   /* body bytes delivered to the write callback */
	unsigned attempts; /* HTTP requests made */
	long http_status;  /* of the last attempt; 0 when none answered */
	bool unreachable;  /* no SDK at the address: nothing listening, no host */
};

/* url NULL or "" means SDK_DEFAULT_URL; only http:// and https:// URLs.
 * opts may be NULL. */
int sdk_client_open(const char *url, const struct sdk_client_opts *opts, struct sdk_client **out,
		    char *err);
void sdk_client_close(struct sdk_client *c);

/* Make the connections from pid's network namespace when it differs from
 * ours (the SDK listens on the target's 127.0.0.1).  0: our own. */
void sdk_client_set_target_pid(struct sdk_client *c, pid_t pid);
const char *sdk_client_url(const struct sdk_client *c);
void sdk_client_last_stats(const struct sdk_client *c, struct sdk_client_stats *out);

/* Fetch and parse the export.  Returns the number of rejected records (0
 * when every record was good; err then says "N records rejected: first:
 * REASON"), or a negative errno with err set and *funcs NULL.  Free the
 * records with sdk_funcs_free(). */
int sdk_client_export(struct sdk_client *c, struct sdk_func **funcs, size_t *n, char *err);
/* Validate one function by name: 0, -ENOENT when the SDK does not know it,
 * or another negative errno.  Free with sdk_validation_free(). */
int sdk_client_validate(struct sdk_client *c, const char *name, struct sdk_validation *out,
			char *err);

/* Validate n functions at once: concurrent requests (a few connections at
 * a time), all of them within budget_ms together, so a slow SDK delays
 * nothing by more than the budget.  Per function: rc[i] is 0, -ENOENT
 * (unknown to the SDK), -ETIMEDOUT (no answer within the budget) or another
 * negative errno, with its status line in errs + i * ERR_LEN.  Returns 0,
 * or a negative errno with err set when nothing could be asked (then rc
 * and out are untouched).  Free each out[i] that has rc[i] == 0. */
int sdk_client_validate_many(struct sdk_client *c, const char *const *names, size_t n,
			     long budget_ms, struct sdk_validation *out, int *rc, char *errs,
			     char *err);

/* The parsers behind the two calls, usable without HTTP (tests, fuzzing).
 * buf need not be NUL-terminated. */
int sdk_client_parse_export(const char *buf, size_t len, struct sdk_func **funcs, size_t *n,
			    char *err);
int sdk_client_parse_validate(const char *buf, size_t len, struct sdk_validation *out, char *err);

void sdk_funcs_free(struct sdk_func *funcs, size_t n);
void sdk_validation_free(struct sdk_validation *v);

/* Cross-check an SDK record against the local index: usable only when the
 * SDK's entry is the entry of the local function of that name AND its offset
 * is that function's file_offset.  Otherwise the local fact wins, *local's
 * sdk_mismatch is set (when the name is known) and reason (ERR_LEN) says why:
 * "sdk mismatch: offset 0x.. is inside main.Foo+0x13, not an entry".
 * local (may be NULL) receives the function of that name, or NULL. */
bool sdk_client_check(const struct func_index *idx, const struct sdk_func *rec,
		      struct func_info **local, char *reason);

#endif
