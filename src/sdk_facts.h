/* What the target's own SDK says about its functions, checked against the
 * binary: a fact is used only when it equals the local index's
 * (docs/ARCHITECTURE.md, "Data flow").  The SDK is optional; without it nothing changes. */
#ifndef RETOP_SDK_FACTS_H
#define RETOP_SDK_FACTS_H

#include <stdbool.h>
#include <stddef.h>

#include "funcs.h"
#include "log.h"

struct sdk_facts {
	struct sdk_client *client; /* NULL when no SDK answered */
	size_t confirmed;	   /* functions whose entry and offset the SDK confirmed */
	size_t rejected;
	char status[ERR_LEN]; /* one line for the operator, "" when silent */
	bool warn;	      /* status reports a failure or rejected facts */
	/* The SDK's answers kept for their arguments: functions without DWARF
	 * whose entry the SDK confirmed at attach. */
	struct sdk_kept *kept;
	size_t nkept;
};

struct sdk_arg;
/* The SDK's arguments of f (kept at attach), their count returned, and its
 * results in rets[0..*nrets); 0 and NULL when the SDK said nothing. */
size_t sdk_facts_args(const struct sdk_facts *sf, const struct func_info *f,
		      const struct sdk_arg **args, const struct sdk_arg **rets, size_t *nrets);

/* url NULL: try the default address quietly (once, short timeouts); a URL
 * the operator gave is tried harder and every failure is reported.  pid
 * (0: none) selects the network namespace to connect from. */
int sdk_facts_open(struct func_index *idx, const char *url, int pid, struct sdk_facts **out);
void sdk_facts_close(struct sdk_facts *sf);

/* How long the SDK requests of one attach may take, all together. */
#define SDK_ATTACH_BUDGET_MS 1000

/* At attach time, ask the SDK for the live truth about fs[0..n), all at
 * once and within SDK_ATTACH_BUDGET_MS together: a slow or silent SDK
 * delays an attach by the budget at most, never per function.  A mismatch
 * or inlining is noted on the function (its binary facts are kept) and
 * logged; functions without an answer in time get one line together.
 * Without an SDK it does nothing. */
void sdk_facts_validate_all(struct sdk_facts *sf, struct func_info **fs, size_t n);

#endif
