/* retop: top for Go function latency. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "batch.h"
#include "cli.h"
#include "funcs.h"
#include "funcs_match.h"
#include "interlock.h"
#include "listing.h"
#include "log.h"
#include "procs.h"
#include "sdk_facts.h"
#include "serve.h"
#include "../ui/ui.h"

/* Exit codes (man retop, EXIT STATUS): 0 ok, 1 runtime failure, 2 usage error. */

/* The binary to index: -x PATH as given, or /proc/PID/exe. */
static int main_target_binary(const struct cli_options *o, char *path, size_t len, char *err)
{
	struct stat st;

	if (o->pid)
		return procs_exe_path(o->pid, path, len, err);
	if (stat(o->exe, &st) != 0)
		return err_set(err, errno, "%s: %s", o->exe, strerror(errno));
	/* open() of a FIFO would wait for a writer forever. */
	if (!S_ISREG(st.st_mode))
		return err_set(err, EINVAL,
			       "%s: not a regular file: give the path of a Go executable", o->exe);
	snprintf(path, len, "%s", o->exe);
	return 0;
}

static int main_load_index(const struct cli_options *o, struct func_index **idx, char *err)
{
	char path[600];
	int ret = main_target_binary(o, path, sizeof(path), err);

	if (ret)
		return ret;
	/* Read once, then the process exits: the file's pages stay. */
	ret = funcs_load(path, FUNCS_KEEP_PAGES | (o->no_dwarf ? FUNCS_NO_DWARF : 0), idx, err);
	if ((ret == -ENOEXEC || ret == -ENODATA) && o->pid)
		procs_explain_not_go(o->pid, ret, err);
	return ret;
}

static int main_list(const struct cli_options *o)
{
	const struct interlock_opts judge = {.entry_probe_first = o->entry_probe_first};
	struct func_index *idx;
	char err[ERR_LEN];
	long n;

	if (main_load_index(o, &idx, err) != 0) {
		fprintf(stderr, "retop: %s\n", err);
		return EXIT_RUNTIME;
	}
	/* The target's SDK, if any, confirms entries and offsets (source "sdk"). */
	if (o->sdk_url || o->pid) {
		struct sdk_facts *sdk;
		if (sdk_facts_open(idx, o->sdk_url, o->pid, &sdk) == 0 && sdk->status[0])
			fprintf(stderr, "retop: %s\n", sdk->status);
		sdk_facts_close(sdk);
	}
	n = listing_print(stdout, idx, &judge, o->list_pattern, o->output == CLI_OUT_JSON);
	if (n == 0 && o->list_pattern) {
		funcs_no_match(idx, o->list_pattern, err);
		fprintf(stderr, "retop: %s\n", err);
	}
	funcs_free(idx);
	if (n < 0) {
		fprintf(stderr, "retop: listing failed: %s\n", strerror((int)-n));
		return EXIT_RUNTIME;
	}
	return n == 0 ? EXIT_RUNTIME : 0;
}

int main(int argc, char **argv)
{
	struct cli_options opts;
	int ret = cli_parse(argc, argv, &opts);

	if (ret > 0)
		return 0;
	if (ret < 0)
		return EXIT_USAGE;
	log_set_level(opts.verbose >= 2 ? LOG_DEBUG : opts.verbose ? LOG_INFO : LOG_WARN);
	log_route_libbpf();
	switch (opts.mode) {
	case CLI_LIST:
		return main_list(&opts);
	case CLI_BATCH:
		return batch_run(&opts);
	case CLI_INTERACTIVE:
		return ui_run(&opts);
	case CLI_SERVE:
		return serve_run(&opts);
	default:
		fprintf(stderr, "retop: this mode is not available in this build yet; use -l\n");
		return EXIT_RUNTIME;
	}
}
