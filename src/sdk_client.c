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
	int netns_fd; /* -1: stay in our namespace */
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
	X(t, curl_url_cleanup, url_cleanup)
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

static void xfer_once(struct xfer *x, long timeout_ms)
{
	const struct sdk_client *c = x->c;
	struct curl_slist *hdrs = NULL;
	CURL *h = curl.easy_init();

	x->len = 0;
	x->status = x->os_errno = 0;
	x->connected = false;
	x->curl_err[0] = '\0';
	x->attempts++;
	if (!h || (c->auth && !(hdrs = curl.slist_append(NULL, c->auth)))) {
		x->rc = CURLE_OUT_OF_MEMORY;
		goto out;
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
	if (hdrs)
		curl.easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
	x->rc = curl.easy_perform(h);
	if (x->rc == CURLE_FILESIZE_EXCEEDED)
		x->over_cap = true; /* Content-Length said so before any byte */
	curl.easy_getinfo(h, CURLINFO_RESPONSE_CODE, &x->status);
	curl.easy_getinfo(h, CURLINFO_OS_ERRNO, &x->os_errno);
	/* Connected, or still connecting when time ran out?  The two timeouts
	 * get different messages. */
	curl_off_t tc = 0, tp = 0;
	curl.easy_getinfo(h, CURLINFO_CONNECT_TIME_T, &tc);
	curl.easy_getinfo(h, CURLINFO_PRETRANSFER_TIME_T, &tp);
	x->connected = tc > 0 || tp > 0 || x->status > 0;
out:
	curl.slist_free_all(hdrs);
	curl.easy_cleanup(h);
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

/* Only this thread enters the target's network namespace: the rest of retop
 * (and the BPF side) stays where it was. */
static void *xfer_thread(void *arg)
{
	struct xfer *x = arg;

	if (setns(x->netns_fd, CLONE_NEWNET)) {
		x->os_errno = errno;
		return x;
	}
	x->netns_fd = -1;
	xfer_run(x);
	return NULL;
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

static int xfer_perform(struct xfer *x, char *err)
{
	pthread_t th;
	void *res = NULL;
	int ret = netns_open(x->c, &x->netns_fd, err);

	if (ret)
		return ret;
	if (x->netns_fd < 0) {
		xfer_run(x);
		return 0;
	}
	ret = pthread_create(&th, NULL, xfer_thread, x);
	if (!ret)
		pthread_join(th, &res);
	int fd_err = res ? (int)x->os_errno : 0;
	close(x->netns_fd);
	x->netns_fd = -1;
	if (ret)
		return err_set(err, ret, "cannot start the SDK transfer thread (%s)",
			       strerror(ret));
	if (res)
		return err_set(err, fd_err,
			       "cannot enter the network namespace of PID %d (%s): " FALLBACK,
			       (int)x->c->pid, strerror(fd_err));
	return 0;
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
		if (x->connected) {
			fmt_secs(what, sizeof(what), c->total_ms);
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

/* GET base+path: 0 with the body in x->buf (NUL-terminated), or the status
 * line.  A 404 returns 0 with x->status 404: its body is the SDK's reason. */
static int sdk_get(struct sdk_client *c, const char *path, size_t cap, struct xfer *x, char *err)
{
	char *url;
	int ret;

	memset(x, 0, sizeof(*x));
	x->c = c;
	x->cap = cap;
	x->netns_fd = -1;
	if (asprintf(&url, "%s%s", c->url, path) < 0)
		return err_set(err, ENOMEM, "out of memory");
	x->url = url;
	ret = xfer_perform(x, err);
	if (!ret)
		ret = xfer_transport_status(x, err);
	if (!ret && x->status != 404)
		ret = xfer_http_status(x, err);
	c->last = (struct sdk_client_stats){x->bytes, x->attempts, x->status};
	free(url);
	x->url = NULL;
	if (ret) {
		free(x->buf);
		x->buf = NULL;
	}
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

int sdk_client_validate(struct sdk_client *c, const char *name, struct sdk_validation *out,
			char *err)
{
	char shown[SDK_SHOW_LEN + 8], why[SDK_SHOW_LEN + 8], *path = NULL;
	struct xfer x;
	int ret;

	memset(out, 0, sizeof(*out));
	if (!name || !*name)
		return err_set(err, EINVAL, "no function name to validate");
	sdk_text_show(shown, sizeof(shown), name, strlen(name));
	CURL *h = curl.easy_init(); /* curl_easy_escape takes a handle */
	char *esc = h ? curl.easy_escape(h, name, (int)strlen(name)) : NULL;
	if (esc && asprintf(&path, "/debug/runtime/validate?func=%s", esc) < 0)
		path = NULL;
	curl.free(esc);
	curl.easy_cleanup(h);
	if (!path)
		return err_set(err, ENOMEM, "out of memory");
	ret = sdk_get(c, path, c->object_cap, &x, err);
	free(path);
	if (!ret && x.status == 404) {
		sdk_parse_not_found(x.buf, x.len, why, sizeof(why));
		ret = err_set(err, ENOENT, "SDK does not know %s (404: %s)", shown, why);
	} else if (!ret) {
		ret = sdk_client_parse_validate(x.buf ? x.buf : "", x.len, out, err);
	}
	free(x.buf);
	/* An answer about another function is no answer. */
	if (!ret && strcmp(out->func.name, name)) {
		sdk_validation_free(out);
		ret = err_set(err, EBADMSG, "SDK answered for another function than %s: ignored",
			      shown);
	}
	return ret;
}
