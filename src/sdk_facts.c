#include "sdk_facts.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "procs.h"
#include "sdk_client.h"

static void sdk_facts_merge(struct sdk_facts *sf, struct func_index *idx,
			    const struct sdk_func *recs, size_t n, const char *url)
{
	char reason[ERR_LEN], first[ERR_LEN] = "";
	struct func_info *f;

	for (size_t i = 0; i < n; i++) {
		if (sdk_client_check(idx, &recs[i], &f, reason)) {
			f->source = SRC_SDK;
			sf->confirmed++;
			continue;
		}
		if (!sf->rejected++)
			snprintf(first, sizeof(first), "%s", reason);
	}
	sf->warn = sf->rejected > 0;
	if (sf->rejected)
		snprintf(sf->status, sizeof(sf->status),
			 "SDK at %s: %zu functions confirmed, %zu rejected (first: %.300s): the "
			 "binary's own facts are used",
			 url, sf->confirmed, sf->rejected, first);
	else
		snprintf(sf->status, sizeof(sf->status), "SDK at %s: %zu functions confirmed", url,
			 sf->confirmed);
}

int sdk_facts_open(struct func_index *idx, const char *url, int pid, struct sdk_facts **out)
{
	struct sdk_facts *sf = calloc(1, sizeof(*sf));
	/* The default address is a guess: one quick try, and silence if no one
	 * listens there. */
	struct sdk_client_opts quiet = {
	    .connect_timeout_ms = 300, .total_timeout_ms = 2000, .attempts = 1};
	struct sdk_func *recs = NULL;
	size_t n = 0;
	char err[ERR_LEN];
	int ret;

	*out = sf;
	if (!sf)
		return -ENOMEM;
	/* The default address is shared by every process of the machine (or
	 * of the target's network namespace): an SDK there that the target
	 * does not hold belongs to another process, and its facts would be
	 * about another binary. */
	if (!url && pid > 0 && procs_listens_on(pid, SDK_DEFAULT_PORT) == 0) {
		log_info("sdk", "PID %d does not listen on %s: no SDK", pid, SDK_DEFAULT_URL);
		return 0;
	}
	ret = sdk_client_open(url, url ? NULL : &quiet, &sf->client, err);
	if (!ret) {
		if (pid > 0)
			sdk_client_set_target_pid(sf->client, pid);
		ret = sdk_client_export(sf->client, &recs, &n, err);
	}
	if (ret < 0) {
		struct sdk_client_stats st = {0};
		if (sf->client)
			sdk_client_last_stats(sf->client, &st);
		/* The default address is a guess: no one there is no news. */
		if (url || !st.unreachable) {
			snprintf(sf->status, sizeof(sf->status), "%s", err);
			sf->warn = true;
		}
		sdk_client_close(sf->client);
		sf->client = NULL;
		return 0;
	}
	sdk_facts_merge(sf, idx, recs, n, sdk_client_url(sf->client));
	if (ret > 0) {
		/* Records the parser refused never reached the check: say so. */
		size_t len = strlen(sf->status);
		snprintf(sf->status + len, sizeof(sf->status) - len,
			 "; %d records refused (%.200s)", ret, err);
		sf->warn = true;
	}
	sdk_funcs_free(recs, n);
	return 0;
}

struct sdk_kept {
	const struct func_info *f;
	struct sdk_validation v;
};

void sdk_facts_close(struct sdk_facts *sf)
{
	if (!sf)
		return;
	for (size_t i = 0; i < sf->nkept; i++)
		sdk_validation_free(&sf->kept[i].v);
	free(sf->kept);
	sdk_client_close(sf->client);
	free(sf);
}

size_t sdk_facts_args(const struct sdk_facts *sf, const struct func_info *f,
		      const struct sdk_arg **args, const struct sdk_arg **rets, size_t *nrets)
{
	*args = *rets = NULL;
	*nrets = 0;
	for (size_t i = 0; sf && i < sf->nkept; i++)
		if (sf->kept[i].f == f) {
			*args = sf->kept[i].v.args;
			*rets = sf->kept[i].v.rets;
			*nrets = sf->kept[i].v.nrets;
			return sf->kept[i].v.nargs;
		}
	return 0;
}

/* A stripped binary has no names or types for its arguments; the SDK's
 * (from reflection) are kept, taking v's memory, once the SDK confirmed
 * the entry.  args_plan_make() still checks them against Go's ABI. */
static void sdk_facts_keep(struct sdk_facts *sf, const struct func_info *f,
			   struct sdk_validation *v)
{
	struct sdk_kept *k;

	if (f->dwarf || (!v->nargs && !v->nrets))
		return;
	for (size_t i = 0; i < sf->nkept; i++)
		if (sf->kept[i].f == f) {
			sdk_validation_free(&sf->kept[i].v);
			sf->kept[i].v = *v;
			memset(v, 0, sizeof(*v));
			return;
		}
	k = realloc(sf->kept, (sf->nkept + 1) * sizeof(*k));
	if (!k)
		return;
	sf->kept = k;
	k[sf->nkept++] = (struct sdk_kept){f, *v};
	memset(v, 0, sizeof(*v));
}

/* What the SDK's answer about f changes: a mismatch or inlining is noted on
 * f and said in one line; the binary's facts are kept either way.  True
 * when the SDK confirmed f as the binary has it. */
static bool sdk_facts_apply(struct func_info *f, const struct sdk_validation *v)
{
	if (v->func.entry != f->entry || v->func.offset != f->file_offset) {
		f->sdk_mismatch = true;
		log_warn("sdk",
			 "%s: sdk mismatch at attach (entry 0x%llx, offset 0x%llx; the binary says "
			 "0x%llx, 0x%llx): using the binary's",
			 f->name, (unsigned long long)v->func.entry,
			 (unsigned long long)v->func.offset, (unsigned long long)f->entry,
			 (unsigned long long)f->file_offset);
		return false;
	}
	if (v->is_inlined) {
		f->sdk_inlined = true;
		log_warn(
		    "sdk",
		    "%s: the SDK reports it inlined: calls through inlined copies are not counted",
		    f->name);
		return false;
	}
	return true;
}

/* The outcome of one batch: per-function facts, then one line for the
 * functions the SDK did not answer in time and one for other failures. */
static void sdk_facts_report(struct sdk_facts *sf, struct func_info **fs, size_t n,
			     struct sdk_validation *vs, const int *rc, const char *errs)
{
	size_t late = 0, failed = 0;
	const char *first = NULL;

	for (size_t i = 0; i < n; i++) {
		if (rc[i] == 0) {
			if (sdk_facts_apply(fs[i], &vs[i]))
				sdk_facts_keep(sf, fs[i], &vs[i]);
			sdk_validation_free(&vs[i]);
		} else if (rc[i] == -ENOENT) {
			log_warn("sdk", "%s: the SDK does not know it: using the binary's facts",
				 fs[i]->name);
		} else if (rc[i] == -ETIMEDOUT) {
			late++;
		} else if (!failed++) {
			first = errs + i * ERR_LEN;
		}
	}
	if (late)
		log_warn("sdk",
			 "SDK at %s: no answer within %.1f s for %zu of %zu functions: using the "
			 "binary's own facts for them",
			 sdk_client_url(sf->client), SDK_ATTACH_BUDGET_MS / 1000.0, late, n);
	if (failed == 1 && n == 1)
		log_warn("sdk", "%s", first);
	else if (failed)
		log_warn("sdk", "SDK at %s: %zu of %zu validations failed (first: %.300s)",
			 sdk_client_url(sf->client), failed, n, first);
}

void sdk_facts_validate_all(struct sdk_facts *sf, struct func_info **fs, size_t n)
{
	const char **names = calloc(n ? n : 1, sizeof(*names));
	struct sdk_validation *vs = calloc(n ? n : 1, sizeof(*vs));
	int *rc = calloc(n ? n : 1, sizeof(*rc));
	char *errs = calloc(n ? n : 1, ERR_LEN), err[ERR_LEN];

	if (!sf || !sf->client || !n)
		goto out;
	if (!names || !vs || !rc || !errs) {
		log_warn("sdk", "out of memory asking the SDK: using the binary's own facts");
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		names[i] = fs[i]->name;
	if (sdk_client_validate_many(sf->client, names, n, SDK_ATTACH_BUDGET_MS, vs, rc, errs,
				     err) != 0)
		log_warn("sdk", "%s", err);
	else
		sdk_facts_report(sf, fs, n, vs, rc, errs);
out:
	free(names);
	free(vs);
	free(rc);
	free(errs);
}
