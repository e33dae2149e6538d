/* Client of the in-process Go SDK (see sdk_client.h): the HTTP side, with
 * libcurl (capped, bounded in time, retried only where a retry can help, run
 * from the target's network namespace when that differs).  Parsing and the
 * cross-check are in sdk_parse.c.
 */
#define _GNU_SOURCE
#include "sdk_client.h"

#include "config.h"
#include "dynlib.h"
#include "log.h"
#include "sdk_parse.h"

/* The entry points are called through a table filled by dlopen (dynlib.h):
 * the type-checking macros would hide the plain declarations. */
#define CURL_DISABLE_TYPECHECK
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MIB (1024u * 1024u)

/* ---- the client ------------------------------------------------------- */

struct sdk_client {
	char *url;  /* base, without a trailing '/' */
	char *auth; /* "Authorization: Bearer ..." or NULL; never logged */
	long connect_ms, total_ms;
	unsigned attempts;
	size_t export_cap, object_cap;
	pid_t pid;
	struct sdk_client_stats last;
};

/* One logical request: up to c->attempts HTTP transfers. */
struct xfer {
	const struct sdk_client *c;
	const char *url;
	size_t cap;
	char *buf;
	size_t len, alloc;
	bool over_cap, nomem;
	uint64_t bytes;
	unsigned attempts;
	CURLcode rc;
	long status, os_errno;
	bool connected; /* the last attempt got a TCP connection */
	char curl_err[CURL_ERROR_SIZE];
	long budget_ms; /* the time the call had, for the timeout's message */
	CURL *h;	/* the attempt in progress */
	struct curl_slist *hdrs;
	bool done;	  /* no more attempts (sdk_client_validate_many) */
	bool out_of_time; /* the shared budget ended it, connected or not */
};

/* libcurl, loaded by the first client (dynlib.h). */
/* clang-format off */
#define CURL_FUNCS(X, t) \
	X(t, curl_global_init, global_init) \
	X(t, curl_global_cleanup, global_cleanup) \
	X(t, curl_easy_init, easy_init) \
	X(t, curl_easy_setopt, easy_setopt) \
	X(t, curl_easy_perform, easy_perform) \
	X(t, curl_easy_getinfo, easy_getinfo) \
	X(t, curl_easy_cleanup, easy_cleanup) \
	X(t, curl_easy_strerror, easy_strerror) \
	X(t, curl_easy_escape, easy_escape) \
	X(t, curl_free, free) \
	X(t, curl_slist_append, slist_append) \
	X(t, curl_slist_free_all, slist_free_all) \
	X(t, curl_url, url) \
	X(t, curl_url_set, url_set) \
	X(t, curl_url_cleanup, url_cleanup) \
	X(t, curl_multi_init, multi_init) \
	X(t, curl_multi_setopt, multi_setopt) \
	X(t, curl_multi_add_handle, multi_add_handle) \
	X(t, curl_multi_remove_handle, multi_remove_handle) \
	X(t, curl_multi_perform, multi_perform) \
	X(t, curl_multi_poll, multi_poll) \
	X(t, curl_multi_info_read, multi_info_read) \
	X(t, curl_multi_cleanup, multi_cleanup)
/* clang-format on */
DYNLIB_TABLE(curl, LIBCURL_SONAME, "libcurl4", CURL_FUNCS);

/* curl_global_init is not reference counted: do it here, under a lock. */
static pthread_mutex_t curl_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned curl_users;

static int curl_get(char *err)
{
	int ret = dynlib_load(&curl_lib, err);

	if (ret)
		return ret;
	pthread_mutex_lock(&curl_lock);
	if (!curl_users && curl.global_init(CURL_GLOBAL_DEFAULT))
		ret = err_set(err, ENOMEM, "cannot initialise libcurl");
	else
		curl_users++;
	pthread_mutex_unlock(&curl_lock);
	return ret;
}

static void curl_put(void)
{
	pthread_mutex_lock(&curl_lock);
	if (!--curl_users)
		curl.global_cleanup();
	pthread_mutex_unlock(&curl_lock);
}

/* A bearer token is base64url-ish: anything else could inject headers. */
static bool token_ok(const char *t)
{
	if (!*t || strlen(t) > 4096)
		return false;
	for (; *t; t++)
		if (!strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~+/=",
			    *t))
			return false;
	return true;
}

static int client_url(struct sdk_client *c, const char *url, char *err)
{
	char shown[SDK_SHOW_LEN + 8];

	if (!url || !*url)
		url = SDK_DEFAULT_URL;
	sdk_text_show(shown, sizeof(shown), url, strlen(url));
	if (strncasecmp(url, "http://", 7) && strncasecmp(url, "https://", 8))
		return err_set(err, EINVAL, "SDK URL %s: only http:// and https:// are supported",
			       shown);
	CURLU *u = curl.url();
	if (!u)
		return err_set(err, ENOMEM, "out of memory");
	CURLUcode uc = curl.url_set(u, CURLUPART_URL, url, 0);
	curl.url_cleanup(u);
	if (uc || strpbrk(url, " \t\r\n?#"))
		return err_set(err, EINVAL, "SDK URL %s is not a valid base URL", shown);
	c->url = strdup(url);
	if (!c->url)
		return err_set(err, ENOMEM, "out of memory");
	for (size_t l = strlen(c->url); l && c->url[l - 1] == '/'; l--)
		c->url[l - 1] = '\0';
	return 0;
}

static int client_token(struct sdk_client *c, const char *token, char *err)
{
	if (!token)
		token = getenv(SDK_TOKEN_ENV);
	if (!token || !*token)
		return 0;
	if (!token_ok(token))
		return err_set(err, EINVAL,
			       "%s holds characters a bearer token cannot have: fix the token",
			       SDK_TOKEN_ENV);
	if (asprintf(&c->auth, "Authorization: Bearer %s", token) < 0) {
		c->auth = NULL;
		return err_set(err, ENOMEM, "out of memory");
	}
	return 0;
}

int sdk_client_open(const char *url, const struct sdk_client_opts *opts, struct sdk_client **out,
		    char *err)
{
	struct sdk_client_opts o = opts ? *opts : (struct sdk_client_opts){0};
	int ret;

	*out = NULL;
	struct sdk_client *c = calloc(1, sizeof(*c));
	if (!c)
		return err_set(err, ENOMEM, "out of memory");
	c->connect_ms = o.connect_timeout_ms > 0 ? o.connect_timeout_ms : 1000;
	c->total_ms = o.total_timeout_ms > 0 ? o.total_timeout_ms : 5000;
	c->attempts = o.attempts ? o.attempts : 3;
	c->export_cap = o.export_cap ? o.export_cap : 64 * MIB;
	c->object_cap = o.object_cap ? o.object_cap : MIB;
	ret = curl_get(err);
	if (ret) {
		free(c);
		return ret;
	}
	ret = client_url(c, url, err);
	if (!ret)
		ret = client_token(c, o.token, err);
	if (ret) {
		free(c->auth);
		free(c->url);
		free(c);
		curl_put();
		return ret;
	}
	*out = c;
	return 0;
}

void sdk_client_close(struct sdk_client *c)
{
	if (!c)
		return;
	if (c->auth) {
		explicit_bzero(c->auth, strlen(c->auth));
		free(c->auth);
	}
	free(c->url);
	free(c);
	curl_put();
}

void sdk_client_set_target_pid(struct sdk_client *c, pid_t pid)
{
	c->pid = pid > 0 ? pid : 0;
}

const char *sdk_client_url(const struct sdk_client *c)
{
	return c->url;
}

void sdk_client_last_stats(const struct sdk_client *c, struct sdk_client_stats *out)
{
	*out = c->last;
}

/* ---- one transfer ----------------------------------------------------- */

/* Counts every byte offered, and refuses the one that crosses the cap: a
 * short return makes curl abort the transfer (CURLE_WRITE_ERROR). */
static size_t xfer_write(char *data, size_t size, size_t nmemb, void *ud)
{
	struct xfer *x = ud;
	size_t n = size * nmemb;

	x->bytes += n;
	if (n > x->cap - x->len) {
		x->over_cap = true;
		return 0;
	}
	if (x->len + n + 1 > x->alloc) {
		size_t na = x->alloc ? x->alloc : 64 * 1024;
		while (na < x->len + n + 1)
			na *= 2;
		if (na > x->cap + 1)
			na = x->cap + 1;
		char *nb = realloc(x->buf, na);
		if (!nb) {
			x->nomem = true;
			return 0;
		}
		x->buf = nb;
		x->alloc = na;
	}
	memcpy(x->buf + x->len, data, n);
	x->len += n;
	x->buf[x->len] = '\0';
	return n;
}

/* An easy handle for the next attempt in x->h; x->rc is set when that
 * failed. */
static int xfer_begin(struct xfer *x, long timeout_ms)
{
	const struct sdk_client *c = x->c;
	CURL *h = x->h = curl.easy_init();

	x->len = 0;
	x->status = x->os_errno = 0;
	x->connected = false;
	x->curl_err[0] = '\0';
	x->attempts++;
	x->hdrs = NULL;
	if (!h || (c->auth && !(x->hdrs = curl.slist_append(NULL, c->auth)))) {
		x->rc = CURLE_OUT_OF_MEMORY;
		return -ENOMEM;
	}
	curl.easy_setopt(h, CURLOPT_URL, x->url);
	curl.easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl.easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
	curl.easy_setopt(h, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
	curl.easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
	/* A proxy from the environment would see the token, and cannot reach
	 * the target's loopback anyway. */
	curl.easy_setopt(h, CURLOPT_PROXY, "");
	curl.easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, c->connect_ms);
	curl.easy_setopt(h, CURLOPT_TIMEOUT_MS, timeout_ms);
	curl.easy_setopt(h, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)x->cap);
	curl.easy_setopt(h, CURLOPT_WRITEFUNCTION, xfer_write);
	curl.easy_setopt(h, CURLOPT_WRITEDATA, x);
	curl.easy_setopt(h, CURLOPT_ERRORBUFFER, x->curl_err);
	curl.easy_setopt(h, CURLOPT_USERAGENT, "retop");
	curl.easy_setopt(h, CURLOPT_PRIVATE, x);
	if (x->hdrs)
		curl.easy_setopt(h, CURLOPT_HTTPHEADER, x->hdrs);
	return 0;
}

/* What the attempt in x->h did, given its result x->rc; frees the handle. */
static void xfer_end(struct xfer *x)
{
	CURL *h = x->h;

	if (x->rc == CURLE_FILESIZE_EXCEEDED)
		x->over_cap = true; /* Content-Length said so before any byte */
	if (h) {
		curl.easy_getinfo(h, CURLINFO_RESPONSE_CODE, &x->status);
		curl.easy_getinfo(h, CURLINFO_OS_ERRNO, &x->os_errno);
		/* Connected, or still connecting when time ran out?  The two
		 * timeouts get different messages. */
		curl_off_t tc = 0, tp = 0;
		curl.easy_getinfo(h, CURLINFO_CONNECT_TIME_T, &tc);
		curl.easy_getinfo(h, CURLINFO_PRETRANSFER_TIME_T, &tp);
		x->connected = tc > 0 || tp > 0 || x->status > 0;
	}
	curl.slist_free_all(x->hdrs);
	curl.easy_cleanup(h);
	x->hdrs = NULL;
	x->h = NULL;
}

static void xfer_once(struct xfer *x, long timeout_ms)
{
	if (xfer_begin(x, timeout_ms) == 0)
		x->rc = curl.easy_perform(x->h);
	xfer_end(x);
}

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static bool xfer_retryable(const struct xfer *x)
{
	if (x->over_cap || x->nomem)
		return false;
	switch (x->rc) {
	case CURLE_OK:
		return x->status >= 500 && x->status <= 599;
	case CURLE_COULDNT_CONNECT:
	case CURLE_OPERATION_TIMEDOUT:
	case CURLE_GOT_NOTHING:
	case CURLE_RECV_ERROR:
	case CURLE_SEND_ERROR:
	case CURLE_PARTIAL_FILE:
		return true;
	default:
		return false;
	}
}

/* The attempts share one deadline: the total timeout bounds the call, not
 * each attempt.  Backoff 100 ms, 200 ms, ... within the same budget. */
static void xfer_run(struct xfer *x)
{
	long deadline = now_ms() + x->c->total_ms, backoff = 100;

	for (unsigned i = 0; i < x->c->attempts; i++) {
		long left = deadline - now_ms();
		if (left <= 0)
			break;
		xfer_once(x, left);
		if (!xfer_retryable(x) || i + 1 == x->c->attempts)
			break;
		left = deadline - now_ms();
		if (left <= backoff)
			break;
		struct timespec ts = {backoff / 1000, (backoff % 1000) * 1000000};
		nanosleep(&ts, NULL);
		backoff *= 2;
	}
}

/* -1 and no error when pid shares our namespace, else an fd for setns(). */
static int netns_open(const struct sdk_client *c, int *fd, char *err)
{
	char path[64];
	struct stat mine, theirs;

	*fd = -1;
	if (!c->pid)
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/ns/net", (int)c->pid);
	if (stat(path, &theirs) && errno == ENOENT)
		return err_set(err, ESRCH,
			       "cannot find the network namespace of PID %d (no such "
			       "process): " FALLBACK,
			       (int)c->pid);
	if (stat("/proc/thread-self/ns/net", &mine) || stat(path, &theirs))
		return err_set(err, errno,
			       "cannot read the network namespace of PID %d (%s): " FALLBACK,
			       (int)c->pid, strerror(errno));
	if (mine.st_dev == theirs.st_dev && mine.st_ino == theirs.st_ino)
		return 0;
	*fd = open(path, O_RDONLY | O_CLOEXEC);
	if (*fd < 0)
		return err_set(err, errno,
			       "cannot open the network namespace of PID %d (%s): " FALLBACK,
			       (int)c->pid, strerror(errno));
	return 0;
}

struct netns_job {
	void (*fn)(void *);
	void *arg;
	int fd, err;
};

/* Only this thread enters the target's network namespace: the rest of retop
 * (and the BPF side) stays where it was. */
static void *netns_thread(void *arg)
{
	struct netns_job *j = arg;

	if (setns(j->fd, CLONE_NEWNET)) {
		j->err = errno;
		return j;
	}
	j->fn(j->arg);
	return NULL;
}

/* fn(arg), from the network namespace of c's target when it is not ours. */
static int netns_run(const struct sdk_client *c, void (*fn)(void *), void *arg, char *err)
{
	struct netns_job j = {.fn = fn, .arg = arg};
	pthread_t th;
	void *res = NULL;
	int ret = netns_open(c, &j.fd, err);

	if (ret)
		return ret;
	if (j.fd < 0) {
		fn(arg);
		return 0;
	}
	ret = pthread_create(&th, NULL, netns_thread, &j);
	if (!ret)
		pthread_join(th, &res);
	close(j.fd);
	if (ret)
		return err_set(err, ret, "cannot start the SDK transfer thread (%s)",
			       strerror(ret));
	if (res)
		return err_set(err, j.err,
			       "cannot enter the network namespace of PID %d (%s): " FALLBACK,
			       (int)c->pid, strerror(j.err));
	return 0;
}

static void xfer_run_job(void *x)
{
	xfer_run(x);
}

/* ---- many transfers at once ------------------------------------------- */

/* Connections to the SDK at once: it runs inside the target, which is
 * busy with its own work. */
#define SDK_PARALLEL 8

struct multi {
	struct xfer *xs;
	size_t n;
	long deadline;
};

/* Start x's next attempt in m, or mark it done when there is no time left. */
static void multi_start(CURLM *m, struct xfer *x, long deadline)
{
	long left = deadline - now_ms();

	if (left <= 0) {
		x->rc = CURLE_OPERATION_TIMEDOUT;
		x->done = x->out_of_time = true;
		return;
	}
	if (xfer_begin(x, left) != 0 || curl.multi_add_handle(m, x->h) != CURLM_OK) {
		x->rc = CURLE_OUT_OF_MEMORY;
		xfer_end(x);
		x->done = true;
	}
}

/* Collect finished transfers; retry those a retry can help while time is
 * left (no backoff: the budget is short and shared).  Returns how many
 * are still running. */
static size_t multi_reap(CURLM *m, struct multi *mu)
{
	size_t active = 0;
	CURLMsg *msg;
	int queued;

	while ((msg = curl.multi_info_read(m, &queued))) {
		struct xfer *x = NULL;
		CURL *h = msg->easy_handle;
		CURLcode rc = msg->data.result;

		if (msg->msg != CURLMSG_DONE)
			continue;
		curl.easy_getinfo(h, CURLINFO_PRIVATE, (char **)&x);
		curl.multi_remove_handle(m, h); /* msg is invalid from here */
		x->rc = rc;
		xfer_end(x);
		/* Queued for a connection or mid-answer, it is the budget's end
		 * that timed it out, not the connect timeout. */
		x->out_of_time = rc == CURLE_OPERATION_TIMEDOUT && mu->deadline - now_ms() < 50;
		if (xfer_retryable(x) && x->attempts < x->c->attempts)
			multi_start(m, x, mu->deadline);
		else
			x->done = true;
	}
	for (size_t i = 0; i < mu->n; i++)
		active += !mu->xs[i].done;
	return active;
}

/* Every transfer of mu, concurrently, until each is done or the deadline
 * passes; those still running then end as timed out. */
static void multi_run(void *arg)
{
	struct multi *mu = arg;
	CURLM *m = curl.multi_init();
	int running;

	for (size_t i = 0; i < mu->n && !m; i++) {
		mu->xs[i].rc = CURLE_OUT_OF_MEMORY;
		mu->xs[i].done = true;
	}
	if (!m)
		return;
	curl.multi_setopt(m, CURLMOPT_MAX_TOTAL_CONNECTIONS, (long)SDK_PARALLEL);
	for (size_t i = 0; i < mu->n; i++)
		multi_start(m, &mu->xs[i], mu->deadline);
	for (;;) {
		long left = mu->deadline - now_ms();

		if (curl.multi_perform(m, &running) != CURLM_OK || !multi_reap(m, mu) || left <= 0)
			break;
		curl.multi_poll(m, NULL, 0, left < 100 ? (int)left : 100, NULL);
	}
	for (size_t i = 0; i < mu->n; i++) {
		struct xfer *x = &mu->xs[i];

		if (x->done)
			continue;
		curl.multi_remove_handle(m, x->h);
		x->rc = CURLE_OPERATION_TIMEDOUT;
		xfer_end(x);
		x->done = x->out_of_time = true;
	}
	curl.multi_cleanup(m);
}

/* ---- status lines ----------------------------------------------------- */

static void fmt_size(char *buf, size_t len, size_t n)
{
	if (n >= MIB && n % MIB == 0)
		snprintf(buf, len, "%zu MiB", n / MIB);
	else if (n >= 1024 && n % 1024 == 0)
		snprintf(buf, len, "%zu KiB", n / 1024);
	else
		snprintf(buf, len, "%zu bytes", n);
}

static void fmt_secs(char *buf, size_t len, long ms)
{
	if (ms % 1000 == 0)
		snprintf(buf, len, "%ld s", ms / 1000);
	else
		snprintf(buf, len, "%.1f s", (double)ms / 1000);
}

/* A transport failure as one status line; 0 when an HTTP answer came. */
static int xfer_transport_status(const struct xfer *x, char *err)
{
	const struct sdk_client *c = x->c;
	char what[64];

	if (x->over_cap) {
		fmt_size(what, sizeof(what), x->cap);
		return err_set(err, EFBIG, "SDK response over %s: ignored", what);
	}
	if (x->nomem || x->rc == CURLE_OUT_OF_MEMORY)
		return err_set(err, ENOMEM, "out of memory reading the SDK response");
	switch (x->rc) {
	case CURLE_OK:
		return 0;
	case CURLE_OPERATION_TIMEDOUT:
		if (x->connected || x->out_of_time) {
			fmt_secs(what, sizeof(what), x->budget_ms ? x->budget_ms : c->total_ms);
			return err_set(err, ETIMEDOUT, "SDK timed out after %s", what);
		}
		fmt_secs(what, sizeof(what), c->connect_ms);
		return err_set(err, ETIMEDOUT,
			       "SDK at %s unreachable (no connection after %s): " FALLBACK, c->url,
			       what);
	case CURLE_COULDNT_CONNECT:
		return err_set(err, x->os_errno ? (int)x->os_errno : ECONNREFUSED,
			       "SDK at %s unreachable (%s): " FALLBACK, c->url,
			       x->os_errno ? strerror((int)x->os_errno) : "cannot connect");
	case CURLE_COULDNT_RESOLVE_HOST:
		return err_set(err, EHOSTUNREACH,
			       "SDK at %s unreachable (host not found): " FALLBACK, c->url);
	default:
		/* curl's own text: it names no SDK data, only the transport. */
		return err_set(err, EIO, "SDK at %s failed (%s): " FALLBACK, c->url,
			       x->curl_err[0] ? x->curl_err : curl.easy_strerror(x->rc));
	}
}

/* An HTTP status other than 200 (and 404, which callers handle). */
static int xfer_http_status(const struct xfer *x, char *err)
{
	const struct sdk_client *c = x->c;

	if (x->status == 200)
		return 0;
	if (x->status == 401 || x->status == 403)
		return err_set(err, EACCES, "SDK refused the token (%ld): %s RETOP_SDK_TOKEN",
			       x->status, c->auth ? "check" : "set");
	if (x->status >= 300 && x->status <= 399)
		return err_set(err, EPROTO,
			       "SDK at %s answered %ld (a redirect, not followed): " FALLBACK,
			       c->url, x->status);
	if (x->status >= 500)
		return err_set(err, EIO, "SDK at %s failed (HTTP %ld) after %u attempts: " FALLBACK,
			       c->url, x->status, x->attempts);
	return err_set(err, EPROTO, "SDK at %s answered HTTP %ld: " FALLBACK, c->url, x->status);
}

/* The outcome of x's transfers: 0 with the body in x->buf (NUL-terminated),
 * or the status line.  A 404 returns 0 with x->status 404: its body is the
 * SDK's reason. */
static int xfer_result(struct sdk_client *c, struct xfer *x, char *err)
{
	int ret = xfer_transport_status(x, err);

	if (!ret && x->status != 404)
		ret = xfer_http_status(x, err);
	c->last = (struct sdk_client_stats){
	    x->bytes, x->attempts, x->status,
	    x->rc == CURLE_COULDNT_CONNECT || x->rc == CURLE_COULDNT_RESOLVE_HOST ||
		(x->rc == CURLE_OPERATION_TIMEDOUT && !x->connected && !x->out_of_time)};
	if (ret) {
		free(x->buf);
		x->buf = NULL;
	}
	return ret;
}

/* GET base+path, as xfer_result() says. */
static int sdk_get(struct sdk_client *c, const char *path, size_t cap, struct xfer *x, char *err)
{
	char *url;
	int ret;

	memset(x, 0, sizeof(*x));
	x->c = c;
	x->cap = cap;
	if (asprintf(&url, "%s%s", c->url, path) < 0)
		return err_set(err, ENOMEM, "out of memory");
	x->url = url;
	ret = netns_run(c, xfer_run_job, x, err);
	if (!ret)
		ret = xfer_result(c, x, err);
	free(url);
	x->url = NULL;
	return ret;
}

int sdk_client_export(struct sdk_client *c, struct sdk_func **funcs, size_t *n, char *err)
{
	struct xfer x;
	int ret;

	*funcs = NULL;
	*n = 0;
	ret = sdk_get(c, "/debug/functions/export", c->export_cap, &x, err);
	if (!ret && x.status == 404)
		ret = err_set(err, ENOENT, "SDK at %s has no export endpoint (404): " FALLBACK,
			      c->url);
	if (!ret)
		ret = sdk_client_parse_export(x.buf ? x.buf : "", x.len, funcs, n, err);
	free(x.buf);
	return ret;
}

/* base/debug/runtime/validate?func=NAME, NULL when out of memory. */
static char *validate_url(const struct sdk_client *c, const char *name)
{
	CURL *h = curl.easy_init(); /* curl_easy_escape takes a handle */
	char *esc = h ? curl.easy_escape(h, name, (int)strlen(name)) : NULL, *url = NULL;

	if (esc && asprintf(&url, "%s/debug/runtime/validate?func=%s", c->url, esc) < 0)
		url = NULL;
	curl.free(esc);
	curl.easy_cleanup(h);
	return url;
}

/* The answer about name in x, parsed into out. */
static int validate_result(struct sdk_client *c, struct xfer *x, const char *name,
			   struct sdk_validation *out, char *err)
{
	char shown[SDK_SHOW_LEN + 8], why[SDK_SHOW_LEN + 8];
	int ret = xfer_result(c, x, err);

	sdk_text_show(shown, sizeof(shown), name, strlen(name));
	if (!ret && x->status == 404) {
		sdk_parse_not_found(x->buf, x->len, why, sizeof(why));
		ret = err_set(err, ENOENT, "SDK does not know %s (404: %s)", shown, why);
	} else if (!ret) {
		ret = sdk_client_parse_validate(x->buf ? x->buf : "", x->len, out, err);
	}
	free(x->buf);
	x->buf = NULL;
	/* An answer about another function is no answer. */
	if (!ret && strcmp(out->func.name, name)) {
		sdk_validation_free(out);
		ret = err_set(err, EBADMSG, "SDK answered for another function than %s: ignored",
			      shown);
	}
	return ret;
}

static void xfers_free(struct xfer *xs, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free((char *)xs[i].url);
		free(xs[i].buf);
	}
	free(xs);
}

int sdk_client_validate_many(struct sdk_client *c, const char *const *names, size_t n,
			     long budget_ms, struct sdk_validation *out, int *rc, char *errs,
			     char *err)
{
	struct xfer *xs = calloc(n ? n : 1, sizeof(*xs));
	struct multi mu = {.xs = xs, .n = n, .deadline = now_ms() + budget_ms};
	int ret = 0;

	if (!xs)
		return err_set(err, ENOMEM, "out of memory");
	for (size_t i = 0; i < n; i++) {
		memset(&out[i], 0, sizeof(out[i]));
		xs[i] = (struct xfer){.c = c, .cap = c->object_cap, .budget_ms = budget_ms};
		if (!names[i] || !*names[i]) {
			xfers_free(xs, n);
			return err_set(err, EINVAL, "no function name to validate");
		}
		if (!(xs[i].url = validate_url(c, names[i]))) {
			xfers_free(xs, n);
			return err_set(err, ENOMEM, "out of memory");
		}
	}
	ret = netns_run(c, multi_run, &mu, err);
	for (size_t i = 0; i < n && !ret; i++)
		rc[i] = validate_result(c, &xs[i], names[i], &out[i], errs + i * ERR_LEN);
	xfers_free(xs, n);
	return ret;
}

int sdk_client_validate(struct sdk_client *c, const char *name, struct sdk_validation *out,
			char *err)
{
	int rc = 0, ret;

	if (!name || !*name) {
		memset(out, 0, sizeof(*out));
		return err_set(err, EINVAL, "no function name to validate");
	}
	ret = sdk_client_validate_many(c, &name, 1, c->total_ms, out, &rc, err, err);
	return ret ? ret : rc;
}
