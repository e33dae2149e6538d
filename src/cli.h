/* The command line (a contract: tests and scripts rely on it; man/retop.8.in). */
#ifndef RETOP_CLI_H
#define RETOP_CLI_H

/* retop's exit status (man retop, EXIT STATUS). */
enum retop_exit { EXIT_OK = 0, EXIT_RUNTIME = 1, EXIT_USAGE = 2 };

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "func_order.h"
#include "timesplit.h"

#define CLI_MAX_PATTERNS 2048
/* --max-functions: the per-function BPF maps are sized for it. */
#define CLI_DEFAULT_MAX_FUNCTIONS 1024

enum cli_mode { CLI_INTERACTIVE = 0, CLI_LIST, CLI_BATCH, CLI_SERVE };
enum cli_output { CLI_OUT_TEXT = 0, CLI_OUT_JSON };

struct cli_options {
	enum cli_mode mode;
	enum cli_output output;
	int pid;	  /* -p, 0 when absent */
	const char *exe;  /* -x, NULL when absent */
	const char *patterns[CLI_MAX_PATTERNS]; /* -t */
	size_t npatterns;
	const char *list_pattern; /* -l [PATTERN] */
	long iterations;	  /* -n, 0 = forever */
	double delay_s;		  /* -d */
	const char *sdk_url;	  /* -s, NULL = default probe */
	double orphan_timeout_s;
	long max_functions;
	long max_in_flight; /* --max-in-flight: in-flight map entries */
	double max_duration_s; /* --max-duration: auto-detach after it; 0 = never */
	bool max_duration_given;
	uint64_t max_memory; /* --max-memory: bytes, 0 = no limit */
	double budget_pct;   /* --budget PCT%: % of one CPU the probes may cost; 0 = no cap */
	double budget_hits;  /* --budget N/s: probe hits a second; 0 = no budget */
	const char *serve_addr;
	bool no_pid_label; /* --serve: leave the pid label out */
	bool no_dwarf;
	bool latency_only; /* --latency-only: no callers, no slowest calls */
	const char *args_pattern; /* --args GLOB */
	uint64_t slow_ns;	  /* --slow DURATION; 0 = off */
	enum timesplit_mode time_split; /* --time-split: on (default), off, sched */
	struct func_order sort;	  /* --sort: batch rows and the live table */
	bool sort_given;
	double baseline_s; /* --baseline SECS: the first SECS of tracing; 0 = none */
	long top;  /* --top N: batch text rows; 0 = all */
	bool idle; /* --idle: batch text lists idle functions */
	bool entry_probe_first; /* RETOP_ENTRY_PROBE=first: entry probes on the first instruction */
	int verbose;
};

/* Parse argv.  Returns 0 to run, 1 when --help/--version was printed (exit
 * 0), or -1 after printing one usage error line (exit 2). */
int cli_parse(int argc, char **argv, struct cli_options *opts);
void cli_usage(FILE *out);

#endif
