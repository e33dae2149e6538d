#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "../bpf/retop.h"
#include "bpf_mem.h"
#include "budget.h"
#include "config.h"
#include "guard.h"
#include "stats.h"
#include "tracer.h"

enum {
	OPT_ORPHAN_TIMEOUT = 256,
	OPT_MAX_FUNCTIONS,
	OPT_MAX_IN_FLIGHT,
	OPT_SERVE,
	OPT_NO_DWARF,
	OPT_NO_PID_LABEL,
	OPT_MAX_DURATION,
	OPT_MAX_MEMORY,
	OPT_BUDGET,
	OPT_LATENCY_ONLY,
	OPT_ARGS,
	OPT_SLOW,
	OPT_SORT,
	OPT_TOP,
	OPT_IDLE,
	OPT_TIME_SPLIT,
	OPT_BASELINE
};

static const struct option long_options[] = {
	{"pid", required_argument, NULL, 'p'},
	{"exe", required_argument, NULL, 'x'},
	{"trace", required_argument, NULL, 't'},
	{"batch", no_argument, NULL, 'b'},
	{"iterations", required_argument, NULL, 'n'},
	{"delay", required_argument, NULL, 'd'},
	{"output", required_argument, NULL, 'o'},
	{"list", optional_argument, NULL, 'l'},
	{"sdk", required_argument, NULL, 's'},
	{"orphan-timeout", required_argument, NULL, OPT_ORPHAN_TIMEOUT},
	{"max-functions", required_argument, NULL, OPT_MAX_FUNCTIONS},
	{"max-in-flight", required_argument, NULL, OPT_MAX_IN_FLIGHT},
	{"max-duration", required_argument, NULL, OPT_MAX_DURATION},
	{"max-memory", required_argument, NULL, OPT_MAX_MEMORY},
	{"budget", required_argument, NULL, OPT_BUDGET},
	{"serve", required_argument, NULL, OPT_SERVE},
	{"no-dwarf", no_argument, NULL, OPT_NO_DWARF},
	{"no-pid-label", no_argument, NULL, OPT_NO_PID_LABEL},
	{"latency-only", no_argument, NULL, OPT_LATENCY_ONLY},
	{"args", required_argument, NULL, OPT_ARGS},
	{"slow", required_argument, NULL, OPT_SLOW},
	{"sort", required_argument, NULL, OPT_SORT},
	{"top", required_argument, NULL, OPT_TOP},
	{"idle", no_argument, NULL, OPT_IDLE},
	{"time-split", required_argument, NULL, OPT_TIME_SPLIT},
	{"baseline", required_argument, NULL, OPT_BASELINE},
	{"verbose", no_argument, NULL, 'v'},
	{"help", no_argument, NULL, 'h'},
	{"version", no_argument, NULL, 'V'},
	{NULL, 0, NULL, 0},
};

void cli_usage(FILE *out)
{
	fprintf(out,
		"Usage: retop [options]\n"
		"  top for Go function latency: uprobes at each function's entry and at every\n"
		"  RET instruction (never uretprobes), paired per goroutine in eBPF.\n"
		"\n"
		"  retop                      pick a Go process, then browse and trace\n"
		"  retop -p PID               open the function browser for PID\n"
		"  retop -x PATH              every process running PATH, now and later\n"
		"\n"
		"  -t, --trace PATTERN        trace the functions a glob matches (repeatable)\n"
		"  -b, --batch                no TUI: print a snapshot every --delay seconds\n"
		"  -n, --iterations N         stop after N snapshots (batch) or N refreshes (TUI)\n"
		"  -d, --delay SECONDS        refresh interval, default 1 (fractions allowed)\n"
		"  -o, --output text|json     batch and list format; json is one object per line\n"
		"  -l, --list[=PATTERN]       list functions of -p/-x and exit\n"
		"      --sort KEY             order of the batch rows (text and JSON) and of the\n"
		"                             live table: p99 (default), p50, err%%, max,\n"
		"                             calls, calls/s, inflight, oldest, orphans,\n"
		"                             unmatched, dropped (highest first), name (A to\n"
		"                             Z); -KEY lowest first, +KEY highest first\n"
		"      --top N                batch text: only the first N rows\n"
		"      --idle                 batch text: a row for each function with no calls\n"
		"                             in the interval (default: one line counts them)\n"
		"      --baseline SECS        the first SECS seconds of tracing are the baseline:\n"
		"                             each function's calls since are compared with\n"
		"                             them (p50/p99 ratios, a rank test: JSON change,\n"
		"                             a line under the row; the dashboard's B marks now)\n"
		"      --serve ADDR           headless: Prometheus /metrics on ADDR (PORT alone:\n"
		"                             127.0.0.1:PORT)\n"
		"      --no-pid-label         --serve: no pid label (a restarted target keeps\n"
		"                             its series)\n"
		"  -s, --sdk URL              SDK base URL (default: try http://127.0.0.1:9002)\n"
		"      --orphan-timeout SECS  a call in flight this long is shown overdue (60);\n"
		"                             it stays in flight until it returns\n"
		"      --max-functions N      most functions traced at once (%d, at most %d)\n"
		"      --max-in-flight N      calls tracked in flight at once, all functions\n"
		"                             together (%u: %.0f MiB of kernel memory, then\n"
		"                             about %u bytes a call in flight); calls past\n"
		"                             it are 'dropped'\n"
		"      --budget N/s|PCT%%      at most N probe hits a second (%.0f/s), or\n"
		"                             traps at most PCT %% of a CPU; over it calls\n"
		"                             are counted at their entry and a sample is\n"
		"                             timed, or estimated (~); 0: none ($RETOP_BUDGET)\n"
		"      --max-duration SECS    detach every probe after this long (600; 0: never;\n"
		"                             --serve: never unless given); the dashboard's\n"
		"                             '+' key adds another period\n"
		"      --max-memory SIZE      refuse to attach if retop's BPF maps plus its own\n"
		"                             resident memory exceed SIZE (e.g. 64M, 1G)\n"
		"      --no-dwarf             do not read DWARF (faster start on huge binaries)\n"
		"      --latency-only         no latency by caller, no slowest calls: the least\n"
		"                             BPF work per call\n"
		"      --args GLOB            capture the arguments of the traced functions\n"
		"                             matching GLOB, shown with their slowest calls\n"
		"                             (results too, where their types are known)\n"
		"      --slow DURATION        also report every call at least DURATION long\n"
		"                             (e.g. 10ms, 500us, 2s), counted and listed\n"
		"      --time-split MODE      split each timed call's duration: on CPU,\n"
		"                             waiting for a CPU, blocked in the kernel,\n"
		"                             parked by Go; on (default: no probe of its\n"
		"                             own), off, or sched (probes on Go's scheduler,\n"
		"                             a trap at every goroutine switch, within the\n"
		"                             budget: parked calls split, and why parked)\n"
		"  -v, --verbose              more messages (twice: libbpf's too)\n"
		"  -h, --help                 this text\n"
		"  -V, --version              version\n"
		"\n"
		"Durations: p50/p99 come from a log-linear histogram (32 buckets per power of\n"
		"two): at most %.1f%% relative error.  'calls' counts returns; entries without\n"
		"a return are 'in flight' (overdue after --orphan-timeout), and 'orphans'\n"
		"once proven dead (goroutine or process exited, goroutine unwound past them).\n"
		"Exit status: 0 ok, 1 runtime failure, 2 usage error.  Needs root (or\n"
		"CAP_BPF + CAP_PERFMON + CAP_SYS_PTRACE) to trace.\n"
		"\n"
		"Memory: retop's BPF maps take about %.1f MiB of kernel memory at the\n"
		"defaults, and grow with the calls in flight (--max-in-flight) and, per\n"
		"function, with its callers (about 10 KiB each); retop itself about\n"
		"10-30 MiB resident, more with DWARF on a large binary.  Both are shown\n"
		"while tracing (the memory line of the batch header and dashboard).\n",
		CLI_DEFAULT_MAX_FUNCTIONS, RETOP_MAX_TRACED, TRACER_DEFAULT_IN_FLIGHT,
		(double)bpf_mem_inflight_base_bytes(TRACER_DEFAULT_IN_FLIGHT) / (1024.0 * 1024.0),
		(unsigned)bpf_mem_inflight_call_bytes(), BUDGET_DEFAULT_HITS_PER_S,
		STATS_PERCENTILE_ERROR_PCT,
		(double)bpf_mem_estimate(TRACER_DEFAULT_IN_FLIGHT, CLI_DEFAULT_MAX_FUNCTIONS) /
		    (1024.0 * 1024.0));
}

static int __attribute__((format(printf, 1, 2))) usage_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "retop: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, " (see retop --help)\n");
	va_end(ap);
	return -1;
}

static bool parse_long(const char *s, long min, long max, long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max)
		return false;
	*out = v;
	return true;
}

static bool parse_seconds(const char *s, double min, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !isfinite(v) || v < min || v > 86400.0)
		return false;
	*out = v;
	return true;
}

/* "10000/s": probe hits a second (0 to 10 million); "2%", "0.5" or "1": a
 * percentage of one CPU (0 to 100), under the default hits a second; "0":
 * no budget. */
static bool parse_budget(const char *s, double *pct, double *hits)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || !isfinite(v) || v < 0)
		return false;
	if (!strcmp(end, "/s")) {
		if (v > 1e7)
			return false;
		*hits = v;
		*pct = 0;
		return true;
	}
	if ((*end && strcmp(end, "%")) || v > 100)
		return false;
	*pct = v;
	*hits = v > 0 ? BUDGET_DEFAULT_HITS_PER_S : 0;
	return true;
}

/* "10ms", "500us", "2s", "1.5", "250000ns": a duration up to an hour; a
 * bare number is seconds, like --delay. */
static bool parse_duration_ns(const char *s, uint64_t *out)
{
	static const struct {
		const char *unit;
		double ns;
	} units[] = {{"ns", 1}, {"us", 1e3}, {"ms", 1e6}, {"s", 1e9}, {"", 1e9}};
	const char *end;
	double v;

	if (!guard_parse_number(s, &v, &end))
		return false;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (strcmp(end, units[i].unit) == 0) {
			v *= units[i].ns;
			if (v < 1 || v > 3600e9)
				return false;
			*out = (uint64_t)(v + 0.5);
			return true;
		}
	return false;
}

/* One mode per run: a second one is a mistake to point out, not to
 * settle silently (`-b --serve` used to run one and ignore the other). */
static int cli_set_mode(struct cli_options *o, enum cli_mode mode)
{
	static const char *const names[] = {
		[CLI_BATCH] = "-b/--batch", [CLI_LIST] = "-l/--list", [CLI_SERVE] = "--serve"};

	if (o->mode != CLI_INTERACTIVE && o->mode != mode)
		return usage_error("%s and %s cannot be combined: choose one mode", names[o->mode],
				   names[mode]);
	o->mode = mode;
	return 0;
}

static int cli_parse_one(int c, struct cli_options *o)
{
	char *end;
	long v;

	switch (c) {
	case 'p':
		if (!parse_long(optarg, 1, INT_MAX, &v))
			return usage_error("-p needs a process id, got '%s'", optarg);
		o->pid = (int)v;
		return 0;
	case 'x':
		o->exe = optarg;
		return 0;
	case 't':
		if (o->npatterns == CLI_MAX_PATTERNS)
			return usage_error("too many -t patterns (at most %d): '%s'", CLI_MAX_PATTERNS,
					   optarg);
		o->patterns[o->npatterns++] = optarg;
		return 0;
	case 'b':
		return cli_set_mode(o, CLI_BATCH);
	case 'n':
		if (!parse_long(optarg, 1, LONG_MAX, &o->iterations))
			return usage_error("-n needs a positive count, got '%s'", optarg);
		return 0;
	case 'd':
		if (!parse_seconds(optarg, 0.05, &o->delay_s))
			return usage_error("-d needs seconds >= 0.05, got '%s'", optarg);
		return 0;
	case 'o':
		if (!strcmp(optarg, "text"))
			o->output = CLI_OUT_TEXT;
		else if (!strcmp(optarg, "json"))
			o->output = CLI_OUT_JSON;
		else
			return usage_error("-o takes text or json, got '%s'", optarg);
		return 0;
	case 'l':
		o->list_pattern = optarg;
		return cli_set_mode(o, CLI_LIST);
	case 's':
		o->sdk_url = optarg;
		return 0;
	case OPT_ORPHAN_TIMEOUT:
		if (!parse_seconds(optarg, 0.1, &o->orphan_timeout_s))
			return usage_error("--orphan-timeout needs seconds >= 0.1, got '%s'", optarg);
		return 0;
	case OPT_MAX_FUNCTIONS:
		if (!parse_long(optarg, 1, RETOP_MAX_TRACED, &o->max_functions))
			return usage_error("--max-functions takes 1 to %d, got '%s'", RETOP_MAX_TRACED,
					   optarg);
		return 0;
	case OPT_MAX_IN_FLIGHT:
		if (!parse_long(optarg, TRACER_MIN_IN_FLIGHT, TRACER_MAX_IN_FLIGHT, &o->max_in_flight))
			return usage_error("--max-in-flight takes %u to %u, got '%s'",
					   TRACER_MIN_IN_FLIGHT, TRACER_MAX_IN_FLIGHT, optarg);
		return 0;
	case OPT_MAX_DURATION:
		errno = 0;
		o->max_duration_s = strtod(optarg, &end);
		if (errno || end == optarg || *end || !isfinite(o->max_duration_s) ||
		    o->max_duration_s < 0 || o->max_duration_s > GUARD_MAX_DURATION_LIMIT_S)
			return usage_error("--max-duration takes seconds from 0 (no limit) to %.0f, got '%s'",
					   GUARD_MAX_DURATION_LIMIT_S, optarg);
		o->max_duration_given = true;
		return 0;
	case OPT_BUDGET:
		if (!parse_budget(optarg, &o->budget_pct, &o->budget_hits))
			return usage_error("--budget takes probe hits a second (e.g. 10000/s), a percentage "
					   "of one CPU (e.g. 2%%) or 0 (no budget), got '%s'",
					   optarg);
		return 0;
	case OPT_MAX_MEMORY:
		if (!guard_parse_size(optarg, &o->max_memory))
			return usage_error("--max-memory takes a size such as 64M or 1G, got '%s'", optarg);
		return 0;
	case OPT_SERVE:
		o->serve_addr = optarg;
		return cli_set_mode(o, CLI_SERVE);
	case OPT_NO_DWARF:
		o->no_dwarf = true;
		return 0;
	case OPT_NO_PID_LABEL:
		o->no_pid_label = true;
		return 0;
	case OPT_LATENCY_ONLY:
		o->latency_only = true;
		return 0;
	case OPT_ARGS:
		o->args_pattern = optarg;
		return 0;
	case OPT_SLOW:
		if (!parse_duration_ns(optarg, &o->slow_ns))
			return usage_error("--slow takes a duration from 1ns to 1h such as 10ms, 500us "
					   "or 2s, got '%s'", optarg);
		return 0;
	case OPT_SORT:
		if (func_order_parse(optarg, &o->sort) != 0) {
			char keys[200];
			func_order_list(keys, sizeof(keys));
			return usage_error("--sort takes one of %s (-KEY: lowest first), got '%s'",
					   keys, optarg);
		}
		o->sort_given = true;
		return 0;
	case OPT_TOP:
		if (!parse_long(optarg, 1, LONG_MAX, &o->top))
			return usage_error("--top needs a positive count of rows, got '%s'",
					   optarg);
		return 0;
	case OPT_IDLE:
		o->idle = true;
		return 0;
	case OPT_TIME_SPLIT:
		if (timesplit_mode_parse(optarg, &o->time_split) != 0)
			return usage_error("--time-split takes on, off or sched, got '%s'", optarg);
		return 0;
	case OPT_BASELINE:
		if (!parse_seconds(optarg, 0.1, &o->baseline_s))
			return usage_error("--baseline takes the seconds of tracing to compare with, "
					   "from 0.1 to 86400, got '%s'",
					   optarg);
		return 0;
	case 'v':
		o->verbose++;
		return 0;
	default:
		return -1; /* getopt printed the error */
	}
}

/* --sort orders what a person reads (batch and the live table); --top and
 * --idle shape the batch text only: JSON keeps every function, as scripts
 * rely on it. */
static int cli_check_rows(const struct cli_options *o)
{
	const char *text_only = o->top ? "--top" : o->idle ? "--idle" : NULL;

	if (o->sort_given && (o->mode == CLI_LIST || o->mode == CLI_SERVE))
		return usage_error("--sort orders batch snapshots and the live table, not %s",
				   o->mode == CLI_LIST ? "-l" : "--serve");
	if (text_only && o->mode != CLI_BATCH)
		return usage_error("%s is an option of batch mode (-b)", text_only);
	if (text_only && o->output == CLI_OUT_JSON)
		return usage_error("%s shapes the batch text; JSON keeps every function",
				   text_only);
	if (o->baseline_s && (o->mode == CLI_LIST || o->mode == CLI_SERVE))
		return usage_error("--baseline compares periods in batch mode and the dashboard, "
				   "not %s",
				   o->mode == CLI_LIST ? "-l" : "--serve");
	/* Tracing would stop before any call after it. */
	if (o->baseline_s && o->max_duration_s && o->baseline_s >= o->max_duration_s)
		return usage_error("--baseline %g s leaves nothing to compare: tracing stops at "
				   "--max-duration %g s",
				   o->baseline_s, o->max_duration_s);
	return 0;
}

int cli_parse(int argc, char **argv, struct cli_options *o)
{
	int c;

	memset(o, 0, sizeof(*o));
	o->delay_s = 1.0;
	o->orphan_timeout_s = 60.0;
	o->max_functions = CLI_DEFAULT_MAX_FUNCTIONS;
	o->max_in_flight = TRACER_DEFAULT_IN_FLIGHT;
	o->max_duration_s = GUARD_DEFAULT_MAX_DURATION_S;
	o->budget_hits = BUDGET_DEFAULT_HITS_PER_S;
	o->sort = func_order_default();
	/* The site's default: the same forms as --budget. */
	const char *env = getenv("RETOP_BUDGET");
	if (env && !parse_budget(env, &o->budget_pct, &o->budget_hits))
		return usage_error("RETOP_BUDGET takes the forms of --budget (10000/s, 2%%, 0), got '%s'",
				   env);
	/* For comparisons (docs/UPROBES.md): any other value is the default. */
	env = getenv("RETOP_ENTRY_PROBE");
	o->entry_probe_first = env && !strcmp(env, "first");
	opterr = 0; /* one message, ours */
	optind = 1;
	while ((c = getopt_long(argc, argv, ":p:x:t:bn:d:o:l::s:vhV", long_options, NULL)) != -1) {
		if (c == 'h') {
			cli_usage(stdout);
			return 1;
		}
		if (c == 'V') {
			printf("retop %s\n", PACKAGE_VERSION);
			return 1;
		}
		if (c == '?' || c == ':') {
			const char *arg = argv[optind - 1];
			if (optopt && strchr("pxtndosl", optopt) && arg[0] == '-' && arg[1] == optopt)
				return usage_error("-%c needs an argument", optopt);
			if (c == ':' && optopt == OPT_SERVE)
				return usage_error("%s", "--serve needs an address: --serve PORT or "
							 "--serve HOST:PORT");
			if (c == ':')
				return usage_error("%s needs an argument", arg);
			return usage_error("unknown option '%s'", arg);
		}
		if (cli_parse_one(c, o))
			return -1;
	}
	/* `-l PATTERN` with a space: the pattern arrives as an operand. */
	if (o->mode == CLI_LIST && !o->list_pattern && optind < argc)
		o->list_pattern = argv[optind++];
	if (optind < argc)
		return usage_error("unexpected argument '%s'", argv[optind]);
	if (o->pid && o->exe)
		return usage_error("%s", "give -p PID or -x PATH, not both");
	/* An exporter runs as long as it is scraped: no limit unless asked. */
	if (o->mode == CLI_SERVE && !o->max_duration_given)
		o->max_duration_s = 0;
	if ((o->mode == CLI_LIST || o->mode == CLI_BATCH || o->mode == CLI_SERVE) && !o->pid &&
	    !o->exe)
		return usage_error("%s", "this mode needs a target: -p PID or -x PATH");
	if (o->latency_only && (o->slow_ns || o->args_pattern))
		return usage_error("--latency-only keeps no slowest calls: leave out %s",
				   o->slow_ns ? "--slow" : "--args");
	if (o->no_pid_label && o->mode != CLI_SERVE)
		return usage_error("%s", "--no-pid-label is an option of --serve");
	if ((o->mode == CLI_BATCH || o->mode == CLI_SERVE) && o->npatterns == 0)
		return usage_error("%s mode needs at least one -t PATTERN",
				   o->mode == CLI_BATCH ? "batch" : "--serve");
	return cli_check_rows(o);
}
