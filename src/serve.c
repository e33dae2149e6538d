/* Headless agent mode: a Prometheus endpoint over libmicrohttpd.
 *
 * Threads: the main thread owns the session.  It samples every --delay
 * seconds, renders the whole /metrics page from that sample, and swaps the
 * page in under a mutex.  libmicrohttpd's polling thread only copies the
 * latest page out under the same mutex, so a scrape never waits for BPF map
 * reads, and any number of scrapes cost nothing extra on the BPF side.
 * SIGTERM/SIGINT/SIGHUP are blocked in every thread and taken by the main
 * thread with sigtimedwait(), so they cut the sampling sleep short whichever
 * thread the kernel would have picked. */
#include "serve.h"

#include <errno.h>
#include <inttypes.h>
#include <microhttpd.h>
#include <netdb.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "dynlib.h"
#include "log.h"
#include "session.h"
#include "stats.h"

enum { EXIT_RUNTIME = 1, EXIT_USAGE = 2 };

#define CONTENT_TYPE_METRICS "text/plain; version=0.0.4; charset=utf-8"

/* The latest rendered /metrics page, shared with the HTTP thread. */
struct serve_state {
	pthread_mutex_t lock;
	char *page;
	size_t len;
};

/* ---- histogram boundaries -------------------------------------------- */

/* 1-2-5 steps from 100 ns to 10 s: Go functions worth tracing live there,
 * and a uprobe pair alone costs about a microsecond. */
static const uint64_t serve_nominal_ns[] = {
    100,	200,	    500,	1000,	     2000,	5000,	   10000,
    20000,	50000,	    100000,	200000,	     500000,	1000000,   2000000,
    5000000,	10000000,   20000000,	50000000,    100000000, 200000000, 500000000,
    1000000000, 2000000000, 5000000000, 10000000000,
};
#define SERVE_NLE (sizeof(serve_nominal_ns) / sizeof(serve_nominal_ns[0]))

static uint64_t serve_le_ns[SERVE_NLE];	    /* printed `le`, in ns */
static uint32_t serve_le_bucket[SERVE_NLE]; /* first log-linear bucket above it */
static size_t serve_nle;

/* Durations are whole nanoseconds and bucket b holds [lo, hi).  Snap each
 * nominal boundary down to the low edge E of its bucket: buckets below E
 * hold exactly the calls < E ns, i.e. <= E - 1 ns, so `le` = E - 1 ns makes
 * each cumulative count an exact sum of buckets under Prometheus's "less
 * than or equal" rule (le = E would wrongly include calls of exactly E). */
static void serve_init_bounds(void)
{
	uint64_t lo, hi;

	if (serve_nle)
		return;
	for (size_t i = 0; i < SERVE_NLE; i++) {
		uint32_t b = retop_hist_bucket(serve_nominal_ns[i]);
		stats_bucket_range(b, &lo, &hi);
		if (serve_nle && lo - 1 <= serve_le_ns[serve_nle - 1])
			continue; /* two nominal values in one bucket: keep one */
		serve_le_ns[serve_nle] = lo - 1;
		serve_le_bucket[serve_nle] = b;
		serve_nle++;
	}
}

size_t serve_le_bounds(const uint64_t **out)
{
	serve_init_bounds();
	*out = serve_le_ns;
	return serve_nle;
}

/* ---- rendering ------------------------------------------------------- */

/* Exact decimal seconds from ns, without float rounding: "0.000000991". */
static void serve_put_seconds(FILE *f, uint64_t ns)
{
	char frac[16];
	int n = snprintf(frac, sizeof(frac), "%09" PRIu64, ns % UINT64_C(1000000000));

	while (n > 0 && frac[n - 1] == '0')
		frac[--n] = '\0';
	fprintf(f, "%" PRIu64 "%s%s", ns / UINT64_C(1000000000), n ? "." : "", frac);
}

/* A label value per the exposition format: \ " and newline escaped. */
static void serve_put_escaped(FILE *f, const char *v)
{
	for (; *v; v++) {
		if (*v == '\\')
			fputs("\\\\", f);
		else if (*v == '"')
			fputs("\\\"", f);
		else if (*v == '\n')
			fputs("\\n", f);
		else
			fputc(*v, f);
	}
}

struct render {
	FILE *f;
	const struct session *s;
	const struct snapshot *snap;
	char pid[24];	    /* the pid label: "1234", or "all" for -x */
	uint64_t sample_ns; /* how long session_sample() took */
};

static void serve_family(struct render *r, const char *name, const char *type, const char *help)
{
	fprintf(r->f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* binary="...",pid="..." */
static void serve_target_labels(struct render *r)
{
	fputs("binary=\"", r->f);
	serve_put_escaped(r->f, r->snap->exe ? r->snap->exe : r->s->display);
	fprintf(r->f, "\",pid=\"%s\"", r->pid);
}

/* function="...",binary="...",pid="..." */
static void serve_func_labels(struct render *r, size_t i)
{
	fputs("function=\"", r->f);
	serve_put_escaped(r->f, r->s->funcs[i].f->name);
	fputs("\",", r->f);
	serve_target_labels(r);
}

/* A function has numbers once it was attached; one that failed to attach
 * only shows up in retop_function_status. */
static bool serve_has_data(const struct session_func *sf)
{
	return sf->slot >= 0 || sf->have_prev;
}

/* "tracing", "entry-only", "detached" or "error": the status string's kind. */
static const char *serve_status_kind(const char *status)
{
	static const char *const kinds[] = {"tracing", "entry-only", "detached"};

	for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++)
		if (!strncmp(status, kinds[k], strlen(kinds[k])))
			return kinds[k];
	return "error";
}

/* retop's own families: build, target, attach errors, its own cost. */
static void serve_render_self(struct render *r)
{
	const struct session *s = r->s;
	unsigned errors = 0;

	for (size_t i = 0; i < s->nfuncs; i++)
		errors += !strcmp(serve_status_kind(s->funcs[i].status), "error");
	serve_family(r, "retop_build_info", "gauge", "retop's version; always 1.");
	fprintf(r->f, "retop_build_info{version=\"%s\"} 1\n", PACKAGE_VERSION);
	serve_family(r, "retop_target_processes", "gauge",
		     "Processes of the target that retop sees running.");
	fputs("retop_target_processes{", r->f);
	serve_target_labels(r);
	fprintf(r->f, "} %zu\n", r->snap->npids);
	serve_family(r, "retop_probe_attach_errors_total", "counter",
		     "Functions asked for with -t whose probes could not be attached.");
	fputs("retop_probe_attach_errors_total{", r->f);
	serve_target_labels(r);
	fprintf(r->f, "} %u\n", errors);
	serve_family(r, "retop_sample_duration_seconds", "gauge",
		     "Time the last sample of the BPF counters took.");
	fputs("retop_sample_duration_seconds{", r->f);
	serve_target_labels(r);
	fputs("} ", r->f);
	serve_put_seconds(r->f, r->sample_ns);
	fputc('\n', r->f);
	serve_family(r, "process_cpu_seconds_total", "counter",
		     "User and system CPU time retop itself spent, in seconds.");
	fprintf(r->f, "process_cpu_seconds_total %.6f\n", session_cpu_seconds());
}

static void serve_render_status(struct render *r)
{
	serve_family(r, "retop_function_status", "gauge",
		     "1 for the function's state: tracing, entry-only (no RET to probe), detached "
		     "or error.");
	for (size_t i = 0; i < r->s->nfuncs; i++) {
		fputs("retop_function_status{", r->f);
		serve_func_labels(r, i);
		fprintf(r->f, ",status=\"%s\"} 1\n", serve_status_kind(r->s->funcs[i].status));
	}
}

/* One value per function: a counter, or a gauge in seconds. */
struct serve_fam {
	const char *name, *type, *help;
	bool seconds; /* the value is ns, printed as seconds */
	uint64_t (*get)(const struct session_func *sf, const struct snapshot_func *sn);
};

static uint64_t get_calls(const struct session_func *sf, const struct snapshot_func *sn)
{
	(void)sn;
	return sf->cur.calls;
}
static uint64_t get_entries(const struct session_func *sf, const struct snapshot_func *sn)
{
	(void)sn;
	return sf->cur.entries;
}
static uint64_t get_unmatched(const struct session_func *sf, const struct snapshot_func *sn)
{
	(void)sn;
	return sf->cur.unmatched;
}
static uint64_t get_reentries(const struct session_func *sf, const struct snapshot_func *sn)
{
	(void)sn;
	return sf->cur.reentries;
}
static uint64_t get_dropped(const struct session_func *sf, const struct snapshot_func *sn)
{
	(void)sn;
	return sf->cur.dropped;
}
static uint64_t get_in_flight(const struct session_func *sf, const struct snapshot_func *sn)
{
	(void)sf;
	return sn->in_flight;
}
static uint64_t get_oldest(const struct session_func *sf, const struct snapshot_func *sn)
{
	(void)sf;
	return sn->oldest_in_flight_ns;
}
static uint64_t get_orphans(const struct session_func *sf, const struct snapshot_func *sn)
{
	(void)sf;
	return sn->orphans;
}
static uint64_t get_p50(const struct session_func *sf, const struct snapshot_func *sn)
{
	(void)sf;
	return sn->v.p50_ns;
}
static uint64_t get_p99(const struct session_func *sf, const struct snapshot_func *sn)
{
	(void)sf;
	return sn->v.p99_ns;
}
static uint64_t get_max(const struct session_func *sf, const struct snapshot_func *sn)
{
	(void)sf;
	return sn->v.max_ns;
}

static const struct serve_fam serve_fams[] = {
    {"retop_function_calls_total", "counter",
     "Calls that returned through a probed RET, paired with their entry.", false, get_calls},
    {"retop_function_entries_total", "counter",
     "Entry probe hits (the only count of an entry-only function).", false, get_entries},
    {"retop_function_in_flight", "gauge",
     "Calls entered and not yet returned (younger than --orphan-timeout).", false, get_in_flight},
    {"retop_function_oldest_in_flight_seconds", "gauge",
     "Age of the oldest call in flight; 0 when none.", true, get_oldest},
    {"retop_orphaned_entries_total", "counter",
     "Entries with no return within --orphan-timeout (panic, goroutine exit, stuck).", false,
     get_orphans},
    {"retop_unmatched_returns_total", "counter",
     "RET hits with no entry, not of calls begun before the attach: returns of dropped calls.",
     false,
     get_unmatched},
    {"retop_function_reentries_total", "counter",
     "Entry hits over a call already in flight with the same key (morestack restarts).", false,
     get_reentries},
    {"retop_function_dropped_total", "counter",
     "Calls lost because the in-flight map was full (--max-in-flight): calls_total is then a lower "
     "bound.",
     false, get_dropped},
    {"retop_function_p50_seconds", "gauge",
     "Median duration since tracing began, read off the log-linear histogram (<= 1.6% error).",
     true, get_p50},
    {"retop_function_p99_seconds", "gauge",
     "99th percentile duration since tracing began (<= 1.6% error).", true, get_p99},
    {"retop_function_max_seconds", "gauge", "Longest call since tracing began.", true, get_max},
};

static void serve_render_fam(struct render *r, const struct serve_fam *fam)
{
	serve_family(r, fam->name, fam->type, fam->help);
	for (size_t i = 0; i < r->s->nfuncs; i++) {
		const struct session_func *sf = &r->s->funcs[i];
		uint64_t v;

		if (!serve_has_data(sf))
			continue;
		v = fam->get(sf, &r->snap->funcs[i]);
		fprintf(r->f, "%s{", fam->name);
		serve_func_labels(r, i);
		fputs("} ", r->f);
		if (fam->seconds)
			serve_put_seconds(r->f, v);
		else
			fprintf(r->f, "%" PRIu64, v);
		fputc('\n', r->f);
	}
}

/* Cumulative counts at each `le`: exact sums of log-linear buckets. */
static void serve_render_hist_one(struct render *r, size_t i)
{
	const __u64 *h = r->s->funcs[i].cur.hist;
	uint64_t acc = 0;
	uint32_t b = 0;

	for (size_t k = 0; k < serve_nle; k++) {
		while (b < serve_le_bucket[k])
			acc += h[b++];
		fputs("retop_function_duration_seconds_bucket{", r->f);
		serve_func_labels(r, i);
		fputs(",le=\"", r->f);
		serve_put_seconds(r->f, serve_le_ns[k]);
		fprintf(r->f, "\"} %" PRIu64 "\n", acc);
	}
	while (b < RETOP_HIST_BUCKETS)
		acc += h[b++];
	fputs("retop_function_duration_seconds_bucket{", r->f);
	serve_func_labels(r, i);
	fprintf(r->f, ",le=\"+Inf\"} %" PRIu64 "\nretop_function_duration_seconds_sum{", acc);
	serve_func_labels(r, i);
	fputs("} ", r->f);
	serve_put_seconds(r->f, r->s->funcs[i].cur.sum_ns);
	fputs("\nretop_function_duration_seconds_count{", r->f);
	serve_func_labels(r, i);
	/* From the buckets, not cur.calls: the format wants _count == +Inf,
	 * and the BPF side bumps calls a moment before the bucket. */
	fprintf(r->f, "} %" PRIu64 "\n", acc);
}

static void serve_render_hist(struct render *r)
{
	serve_family(r, "retop_function_duration_seconds", "histogram",
		     "Duration of paired calls; each le is exact (a sum of log-linear buckets).");
	for (size_t i = 0; i < r->s->nfuncs; i++)
		if (serve_has_data(&r->s->funcs[i]))
			serve_render_hist_one(r, i);
}

static void serve_render_sites(struct render *r)
{
	serve_family(r, "retop_ret_site_hits_total", "counter",
		     "Hits of each RET instruction (offset from the entry; line 0 when unknown).");
	for (size_t i = 0; i < r->s->nfuncs; i++) {
		const struct snapshot_func *sn = &r->snap->funcs[i];

		if (!serve_has_data(&r->s->funcs[i]))
			continue;
		for (size_t k = 0; k < sn->nsites; k++) {
			fputs("retop_ret_site_hits_total{", r->f);
			serve_func_labels(r, i);
			fprintf(r->f, ",site=\"0x%" PRIx32 "\",line=\"%d\"} %" PRIu64 "\n",
				sn->sites[k].offset, sn->sites[k].line, sn->sites[k].hits);
		}
	}
}

/* Latency by caller.  The caller label is bounded: at most CALLERS_MAX
 * calling functions per traced function, then caller="other". */
static void serve_render_callers_fam(struct render *r, const char *name, int what)
{
	for (size_t i = 0; i < r->s->nfuncs; i++) {
		const struct callers_view *c = &r->snap->funcs[i].callers;

		if (!serve_has_data(&r->s->funcs[i]))
			continue;
		for (size_t k = 0; k < c->n; k++) {
			fprintf(r->f, "%s{", name);
			serve_func_labels(r, i);
			fputs(",caller=\"", r->f);
			serve_put_escaped(r->f, c->rows[k].name);
			fputs("\"} ", r->f);
			if (what == 0)
				fprintf(r->f, "%" PRIu64, c->rows[k].calls);
			else
				serve_put_seconds(r->f, what == 1 ? c->rows[k].mean_ns
								  : what == 2 ? c->rows[k].p50_ns
									      : c->rows[k].p99_ns);
			fputc('\n', r->f);
		}
	}
}

static void serve_render_callers(struct render *r)
{
	serve_family(r, "retop_caller_calls_total", "counter",
		     "Paired calls by calling function: the 16 busiest, then caller=\"other\".");
	serve_render_callers_fam(r, "retop_caller_calls_total", 0);
	serve_family(r, "retop_caller_mean_seconds", "gauge",
		     "Mean duration by calling function since tracing began.");
	serve_render_callers_fam(r, "retop_caller_mean_seconds", 1);
	serve_family(r, "retop_caller_p50_seconds", "gauge",
		     "Median duration by calling function since tracing began (<= 1.6% error).");
	serve_render_callers_fam(r, "retop_caller_p50_seconds", 2);
	serve_family(r, "retop_caller_p99_seconds", "gauge",
		     "99th percentile duration by calling function since tracing began (<= 1.6% "
		     "error).");
	serve_render_callers_fam(r, "retop_caller_p99_seconds", 3);
}

/* The whole page into a fresh buffer (the caller owns it). */
static int serve_render(const struct session *s, const struct snapshot *snap, uint64_t sample_ns,
			char **page, size_t *len)
{
	struct render r = {.s = s, .snap = snap, .sample_ns = sample_ns};

	if (s->attach_pid > 0)
		snprintf(r.pid, sizeof(r.pid), "%d", s->attach_pid);
	else
		snprintf(r.pid, sizeof(r.pid), "all");
	r.f = open_memstream(page, len);
	if (!r.f)
		return -ENOMEM;
	serve_render_self(&r);
	serve_render_status(&r);
	for (size_t k = 0; k < sizeof(serve_fams) / sizeof(serve_fams[0]); k++)
		serve_render_fam(&r, &serve_fams[k]);
	serve_render_hist(&r);
	serve_render_sites(&r);
	serve_render_callers(&r);
	if (ferror(r.f)) {
		fclose(r.f);
		free(*page);
		return -ENOMEM;
	}
	if (fclose(r.f) != 0) {
		free(*page);
		return -ENOMEM;
	}
	return 0;
}

/* ---- HTTP ------------------------------------------------------------ */

/* libmicrohttpd, loaded when --serve starts (dynlib.h). */
/* clang-format off */
#define MHD_FUNCS(X, t) \
	X(t, MHD_start_daemon, start_daemon) \
	X(t, MHD_stop_daemon, stop_daemon) \
	X(t, MHD_create_response_from_buffer, create_response_from_buffer) \
	X(t, MHD_add_response_header, add_response_header) \
	X(t, MHD_queue_response, queue_response) \
	X(t, MHD_destroy_response, destroy_response)
/* clang-format on */
DYNLIB_TABLE(mhd, LIBMICROHTTPD_SONAME, "libmicrohttpd12", MHD_FUNCS);

static enum MHD_Result serve_reply(struct MHD_Connection *c, unsigned status, const char *type,
				   const char *body, size_t len)
{
	struct MHD_Response *resp =
	    mhd.create_response_from_buffer(len, (void *)body, MHD_RESPMEM_MUST_COPY);
	enum MHD_Result ret;

	if (!resp)
		return MHD_NO; /* out of memory: MHD drops the connection */
	mhd.add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	ret = mhd.queue_response(c, status, resp);
	mhd.destroy_response(resp);
	return ret;
}

static enum MHD_Result serve_metrics(struct serve_state *st, struct MHD_Connection *c)
{
	struct MHD_Response *resp;
	enum MHD_Result ret;

	/* Copy under the lock: the sampler frees the old page when it swaps
	 * a new one in. */
	pthread_mutex_lock(&st->lock);
	resp = mhd.create_response_from_buffer(st->len, st->page, MHD_RESPMEM_MUST_COPY);
	pthread_mutex_unlock(&st->lock);
	if (!resp)
		return MHD_NO;
	mhd.add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, CONTENT_TYPE_METRICS);
	ret = mhd.queue_response(c, MHD_HTTP_OK, resp);
	mhd.destroy_response(resp);
	return ret;
}

static enum MHD_Result serve_handler(void *cls, struct MHD_Connection *c, const char *url,
				     const char *method, const char *version,
				     const char *upload_data, size_t *upload_size, void **con_cls)
{
	static const char index[] = "retop: see /metrics (Prometheus) and /healthz\n";
	(void)version;
	(void)upload_data;
	(void)upload_size;
	(void)con_cls;

	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
		return serve_reply(c, MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain", "GET only\n", 9);
	if (!strcmp(url, "/metrics"))
		return serve_metrics(cls, c);
	if (!strcmp(url, "/healthz"))
		return serve_reply(c, MHD_HTTP_OK, "text/plain", "ok\n", 3);
	if (!strcmp(url, "/"))
		return serve_reply(c, MHD_HTTP_OK, "text/plain", index, sizeof(index) - 1);
	return serve_reply(c, MHD_HTTP_NOT_FOUND, "text/plain", "not found\n", 10);
}

/* ---- the listening socket -------------------------------------------- */

static bool serve_is_port(const char *p)
{
	char *end;
	long v;

	if (!*p || strspn(p, "0123456789") != strlen(p))
		return false;
	errno = 0;
	v = strtol(p, &end, 10);
	return !errno && v >= 1 && v <= 65535;
}

/* "PORT" (127.0.0.1 only: exposing an agent is a decision, not a default),
 * "HOST:PORT", "[V6]:PORT".  host and port point into buf. */
static int serve_split_addr(const char *addr, char *buf, size_t len, char **host, char **port)
{
	char *colon;

	if (snprintf(buf, len, "%s", addr) >= (int)len)
		return -EINVAL;
	if (serve_is_port(buf)) {
		*host = "127.0.0.1";
		*port = buf;
		return 0;
	}
	if (buf[0] == '[') {
		colon = strstr(buf, "]:");
		if (!colon)
			return -EINVAL;
		*colon = '\0';
		*host = buf + 1;
		*port = colon + 2;
	} else {
		colon = strchr(buf, ':');
		if (!colon || strchr(colon + 1, ':'))
			return -EINVAL; /* none, or a bare IPv6 address */
		*colon = '\0';
		*host = buf;
		*port = colon + 1;
	}
	return **host && serve_is_port(*port) ? 0 : -EINVAL;
}

static int serve_bind_one(const struct addrinfo *ai)
{
	int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol), one = 1;

	if (fd < 0)
		return -errno;
	/* Rebind at once after a restart despite connections in TIME_WAIT;
	 * a live listener on the port still makes bind() fail. */
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 || listen(fd, 64) != 0) {
		int e = errno;
		close(fd);
		return -e;
	}
	return fd;
}

/* A listening socket for ADDR, or a negative errno with err filled:
 * -EINVAL means ADDR itself is malformed (a usage error). */
static int serve_listen(const char *addr, char *err)
{
	struct addrinfo hints = {.ai_flags = AI_PASSIVE | AI_NUMERICSERV,
				 .ai_family = AF_UNSPEC,
				 .ai_socktype = SOCK_STREAM};
	struct addrinfo *res, *ai;
	char buf[300], *host, *port;
	int fd = -EADDRNOTAVAIL, gai;

	if (serve_split_addr(addr, buf, sizeof(buf), &host, &port))
		return err_set(err, EINVAL,
			       "--serve '%s': give PORT (127.0.0.1 only), HOST:PORT or "
			       "[IPV6]:PORT, port 1-65535",
			       addr);
	gai = getaddrinfo(host, port, &hints, &res);
	if (gai)
		return err_set(err, EHOSTUNREACH, "--serve %s: cannot resolve '%s': %s", addr, host,
			       gai_strerror(gai));
	for (ai = res; ai; ai = ai->ai_next) {
		fd = serve_bind_one(ai);
		if (fd >= 0)
			break;
	}
	freeaddrinfo(res);
	if (fd < 0)
		return err_set(err, -fd, "cannot listen on %s:%s: %s%s", host, port, strerror(-fd),
			       fd == -EADDRINUSE
				   ? " (another retop or exporter on that port? pick another)"
				   : "");
	return fd;
}

/* ---- the sampling loop ----------------------------------------------- */

/* Sample, render, and publish.  Returns true when a -p target has exited. */
static bool serve_sample(struct serve_state *st, struct session *s)
{
	uint64_t t0 = tracer_now_ns();
	const struct snapshot *snap = session_sample(s);
	uint64_t took = tracer_now_ns() - t0;
	char *page = NULL, *old;
	size_t len = 0;

	if (serve_render(s, snap, took, &page, &len) != 0) {
		log_warn("serve", "out of memory rendering /metrics; serving the previous sample");
		return snap->target_exited;
	}
	pthread_mutex_lock(&st->lock);
	old = st->page;
	st->page = page;
	st->len = len;
	pthread_mutex_unlock(&st->lock);
	free(old);
	return snap->target_exited;
}

/* Until a signal, -n samples, or the -p target's exit; returns the exit code. */
static int serve_loop(struct serve_state *st, struct session *s, const struct cli_options *o,
		      const sigset_t *sigs)
{
	uint64_t period = (uint64_t)(o->delay_s * 1e9), next = tracer_now_ns() + period;

	for (long n = 1; o->iterations == 0 || n < o->iterations; n++) {
		uint64_t now;

		/* Absolute deadlines: sampling time does not stretch the period. */
		while ((now = tracer_now_ns()) < next) {
			struct timespec ts = {.tv_sec = (time_t)((next - now) / 1000000000ull),
					      .tv_nsec = (long)((next - now) % 1000000000ull)};
			int sig = sigtimedwait(sigs, NULL, &ts);

			if (sig > 0) {
				log_info("serve", "signal %d: stopping", sig);
				return 0;
			}
			if (sig < 0 && errno == EAGAIN)
				break;
		}
		next += period;
		if (next <= now)
			next = now + period; /* stalled (suspended?): do not burst */
		if (serve_sample(st, s)) {
			fprintf(stderr, "retop: PID %d exited; tracing stopped\n", o->pid);
			return 0;
		}
	}
	return 0;
}

static struct MHD_Daemon *serve_start_http(struct serve_state *st, int fd)
{
	/* Bounded, so a slow or hostile client cannot pile up connections. */
	return mhd.start_daemon(MHD_USE_INTERNAL_POLLING_THREAD, 0, NULL, NULL, serve_handler, st,
				MHD_OPTION_LISTEN_SOCKET, fd, MHD_OPTION_CONNECTION_LIMIT,
				(unsigned)32, MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)10,
				MHD_OPTION_END);
}

static int serve_open_session(const struct cli_options *o, struct session **s, char *err)
{
	struct session_opts so;
	int ret;

	session_opts_from_cli(o, &so);
	ret = session_open(&so, s, err);
	if (!ret)
		ret = session_start_tracing(*s, err);
	if (!ret)
		ret = session_trace_patterns(*s, o->patterns, o->npatterns, err);
	return ret;
}

int serve_run(const struct cli_options *o)
{
	struct serve_state st = {.lock = PTHREAD_MUTEX_INITIALIZER};
	struct session *s = NULL;
	struct MHD_Daemon *d;
	char err[ERR_LEN];
	sigset_t sigs;
	int fd, ret;

	serve_init_bounds();
	/* Blocked before any thread exists, so every thread inherits it; never
	 * unblocked: a second SIGTERM pending would kill us on the way out. */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);
	signal(SIGPIPE, SIG_IGN);
	/* Library and port first: either missing is found before any probe
	 * goes in. */
	if (dynlib_load(&mhd_lib, err) != 0) {
		fprintf(stderr, "retop: --serve: %s\n", err);
		return EXIT_RUNTIME;
	}
	fd = serve_listen(o->serve_addr, err);
	if (fd < 0) {
		fprintf(stderr, "retop: %s\n", err);
		return fd == -EINVAL ? EXIT_USAGE : EXIT_RUNTIME;
	}
	if (serve_open_session(o, &s, err) != 0) {
		fprintf(stderr, "retop: %s\n", err);
		session_close(s);
		close(fd);
		return EXIT_RUNTIME;
	}
	serve_sample(&st, s); /* the first scrape sees every series, at 0 */
	d = serve_start_http(&st, fd);
	if (!d) {
		fprintf(stderr, "retop: cannot start the HTTP server on %s\n", o->serve_addr);
		close(fd);
		ret = EXIT_RUNTIME;
	} else {
		fprintf(stderr, "retop: serving /metrics on %s (%zu functions; SIGTERM stops)\n",
			o->serve_addr, s->nfuncs);
		ret = serve_loop(&st, s, o, &sigs);
		mhd.stop_daemon(d); /* joins the HTTP thread and closes fd */
	}
	session_close(s);
	free(st.page);
	pthread_mutex_destroy(&st.lock);
	return ret;
}
