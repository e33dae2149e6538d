#include "sdk_facts.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
			 "SDK at %s: %zu functions confirmed, %zu rejected (first: %.300s): the binary's own facts are used",
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
	struct sdk_client_opts quiet = {.connect_timeout_ms = 300, .total_timeout_ms = 2000,
					.attempts = 1};
	struct sdk_func *recs = NULL;
	size_t n = 0;
	char err[ERR_LEN];
	int ret;

	*out = sf;
	if (!sf)
		return -ENOMEM;
	ret = sdk_client_open(url, url ? NULL : &quiet, &sf->client, err);
	if (!ret) {
		if (pid > 0)
			sdk_client_set_target_pid(sf->client, pid);
		ret = sdk_client_export(sf->client, &recs, &n, err);
	}
	if (ret < 0) {
		if (url || !strstr(err, "unreachable")) {
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
		snprintf(sf->status + len, sizeof(sf->status) - len, "; %d records refused (%.200s)",
			 ret, err);
		sf->warn = true;
	}
	sdk_funcs_free(recs, n);
	return 0;
}

void sdk_facts_close(struct sdk_facts *sf)
{
	if (!sf)
		return;
	sdk_client_close(sf->client);
	free(sf);
}

int sdk_facts_validate(struct sdk_facts *sf, struct func_info *f, char *warn)
{
	struct sdk_validation v;
	char err[ERR_LEN];
	int ret;

	warn[0] = '\0';
	if (!sf || !sf->client)
		return 0;
	ret = sdk_client_validate(sf->client, f->name, &v, err);
	if (ret == -ENOENT) {
		snprintf(warn, ERR_LEN, "%s: the SDK does not know it: using the binary's facts",
			 f->name);
		return 0;
	}
	if (ret < 0) {
		snprintf(warn, ERR_LEN, "%s", err);
		return 0;
	}
	if (v.func.entry != f->entry || v.func.offset != f->file_offset) {
		f->sdk_mismatch = true;
		snprintf(warn, ERR_LEN,
			 "%s: sdk mismatch at attach (entry 0x%llx, offset 0x%llx; the binary says 0x%llx, 0x%llx): using the binary's",
			 f->name, (unsigned long long)v.func.entry, (unsigned long long)v.func.offset,
			 (unsigned long long)f->entry, (unsigned long long)f->file_offset);
	} else if (v.is_inlined) {
		f->sdk_inlined = true;
		snprintf(warn, ERR_LEN,
			 "%s: the SDK reports it inlined: calls through inlined copies are not counted",
			 f->name);
	}
	sdk_validation_free(&v);
	return 0;
}
