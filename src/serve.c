/* Headless agent mode: a Prometheus endpoint over libmicrohttpd.
 *
 * Threads: the main thread owns the session.  It samples every --delay
 * seconds, and renders the whole /metrics page from the latest sample
 * (serve_page.c) when a scrape asks for it, once a sample at most, then
 * swaps it in under a mutex: a thousand functions' page is 21 MB of text,
 * which rendered every second took 4-5% of a core whether or not anyone
 * scraped.  It also indexes, asks the SDK and attaches before that, while
 * the server already answers with a "not ready" page.  libmicrohttpd's
 * single epoll thread copies the latest page out under the same mutex
 * (gzipping it first, once per page, when a scraper accepts gzip); when a
 * newer sample than the page's exists, it asks the main thread for the
 * page and waits for it (SERVE_RENDER_WAIT_NS at most), so a scrape never
 * waits for BPF map reads or attach work, and any number of scrapes cost
 * nothing extra on the BPF side.
 * SIGTERM/SIGINT/SIGHUP are blocked in every thread and taken by the main
 * thread through a signalfd (or sigtimedwait()), so they cut the sampling
 * sleep short whichever thread the kernel would have picked. */
#include "serve.h"

#include <errno.h>
#include <inttypes.h>
#include <malloc.h>
#include <microhttpd.h>
#include <netdb.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "config.h"
#include "dynlib.h"
#include "log.h"
#include "serve_page.h"
#include "session.h"
#include "tracer.h"

#define CONTENT_TYPE_METRICS "text/plain; version=0.0.4; charset=utf-8"

/* A rendered page (or its gzip), shared by the state and every response
 * still sending it: freed by the last of them.  A copy per scrape made
 * each slow client hold 21 MB with a thousand functions traced. */
struct serve_buf {
	_Atomic unsigned refs;
	char *text;
	size_t len;
};

/* The latest rendered /metrics page, shared with the HTTP thread. */
struct serve_state {
	pthread_mutex_t lock;
	struct serve_buf *page;
	/* The same page gzip-compressed: by the HTTP thread, at the first
	 * scrape that accepts gzip, so once per sample at most and never for
	 * samples no one scraped. */
	struct serve_buf *gz;
	bool gz_tried;
	bool pid_label;	    /* false with --no-pid-label */
	char last_end[160]; /* how the -p target's tracing ended (snapshot.target_end) */
	/* Samples taken, and the one the page was rendered from: a scrape
	 * that finds the page older writes want_fd (an eventfd the main
	 * thread polls) and waits on rendered.  stopping: the main thread no
	 * longer renders. */
	uint64_t sample_seq, page_seq;
	int want_fd;
	pthread_cond_t rendered;
	bool stopping;
	/* The main thread's own: the latest sample, valid until the next. */
	const struct snapshot *snap;
	uint64_t took_ns;
};

/* How long a scrape waits for the main thread to render a newer sample
 * (busy attaching, or in a governor tick): then the older page. */
#define SERVE_RENDER_WAIT_NS 2000000000ull

/* ---- HTTP ------------------------------------------------------------ */

/* libmicrohttpd, loaded when --serve starts (dynlib.h). */
/* clang-format off */
#define MHD_FUNCS(X, t) \
	X(t, MHD_start_daemon, start_daemon) \
	X(t, MHD_stop_daemon, stop_daemon) \
	X(t, MHD_create_response_from_buffer, create_response_from_buffer) \
	X(t, MHD_create_response_from_buffer_with_free_callback_cls, \
	  create_response_from_buffer_with_free_callback_cls) \
	X(t, MHD_add_response_header, add_response_header) \
	X(t, MHD_queue_response, queue_response) \
	X(t, MHD_destroy_response, destroy_response) \
	X(t, MHD_lookup_connection_value, lookup_connection_value)
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

/* text (malloc'd) as a buffer with one reference; NULL (text freed) on no
 * memory. */
static struct serve_buf *serve_buf_new(char *text, size_t len)
{
	struct serve_buf *b = malloc(sizeof(*b));

	if (!b) {
		free(text);
		return NULL;
	}
	atomic_init(&b->refs, 1);
	b->text = text;
	b->len = len;
	return b;
}

/* Also libmicrohttpd's callback once a response is done with it. */
static void serve_buf_unref(void *cls)
{
	struct serve_buf *b = cls;

	if (b && atomic_fetch_sub(&b->refs, 1) == 1) {
		free(b->text);
		free(b);
	}
}

static enum MHD_Result serve_metrics(struct serve_state *st, struct MHD_Connection *c)
{
	const char *ae =
	    mhd.lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT_ENCODING);
	bool gz = serve_page_accepts_gzip(ae);
	struct MHD_Response *resp;
	enum MHD_Result ret;

	/* Copy under the lock: the sampler frees the old page when it swaps
	 * a new one in. */
	pthread_mutex_lock(&st->lock);
	if (st->page_seq != st->sample_seq && !st->stopping) {
		uint64_t one = 1;
		struct timespec until;
		clock_gettime(CLOCK_MONOTONIC, &until);
		until.tv_sec += (time_t)(SERVE_RENDER_WAIT_NS / 1000000000ull);
		if (write(st->want_fd, &one, sizeof(one)) == (ssize_t)sizeof(one))
			while (st->page_seq != st->sample_seq && !st->stopping &&
			       pthread_cond_timedwait(&st->rendered, &st->lock, &until) == 0)
				;
	}
	if (gz && !st->gz_tried) {
		char *z = NULL;
		size_t zlen = 0;
		st->gz_tried = true;
		/* Out of memory: plain this time. */
		if (serve_page_gzip(st->page->text, st->page->len, &z, &zlen) == 0)
			st->gz = serve_buf_new(z, zlen);
	}
	struct serve_buf *b = gz && st->gz ? st->gz : st->page;
	gz = b == st->gz;
	atomic_fetch_add(&b->refs, 1);
	resp = mhd.create_response_from_buffer_with_free_callback_cls(b->len, b->text,
								      serve_buf_unref, b);
	pthread_mutex_unlock(&st->lock);
	if (!resp) {
		serve_buf_unref(b);
		return MHD_NO;
	}
	mhd.add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, CONTENT_TYPE_METRICS);
	mhd.add_response_header(resp, MHD_HTTP_HEADER_VARY, MHD_HTTP_HEADER_ACCEPT_ENCODING);
	if (gz)
		mhd.add_response_header(resp, MHD_HTTP_HEADER_CONTENT_ENCODING, "gzip");
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

/* Swap a page rendered from sample seq in; the old one goes with the last
 * response sending it.  No memory: the old one stays. */
static int serve_publish(struct serve_state *st, char *page, size_t len, uint64_t seq)
{
	struct serve_buf *b = serve_buf_new(page, len), *old, *old_gz;

	if (!b)
		return -ENOMEM;
	pthread_mutex_lock(&st->lock);
	old = st->page;
	old_gz = st->gz;
	st->page = b;
	st->gz = NULL;
	st->gz_tried = false;
	st->page_seq = seq;
	pthread_cond_broadcast(&st->rendered);
	pthread_mutex_unlock(&st->lock);
	serve_buf_unref(old);
	serve_buf_unref(old_gz);
	return 0;
}

/* The page served before the probes are in. */
static int serve_publish_starting(struct serve_state *st)
{
	char *page = NULL;
	size_t len = 0;

	if (serve_page_render_starting(session_cpu_seconds(), &page, &len) != 0)
		return -ENOMEM;
	return serve_publish(st, page, len, 0);
}

/* The page of the latest sample, for the scrapes waiting for it. */
static void serve_render(struct serve_state *st)
{
	char *page = NULL;
	size_t len = 0;
	uint64_t seq = st->sample_seq; /* written by this thread only */

	if (!st->snap || st->page_seq == seq)
		return;
	if (serve_page_render(st->snap, st->took_ns, st->pid_label, &page, &len) != 0 ||
	    serve_publish(st, page, len, seq) != 0) {
		log_warn("serve", "out of memory rendering /metrics; serving the previous sample");
		/* The waiting scrapes take the older page now. */
		pthread_mutex_lock(&st->lock);
		pthread_cond_broadcast(&st->rendered);
		pthread_mutex_unlock(&st->lock);
	}
}

/* Sample; the page waits for a scrape.  Returns true when a -p target has
 * exited. */
static bool serve_sample(struct serve_state *st, struct session *s)
{
	uint64_t t0 = clock_now_ns();
	const struct snapshot *snap = session_sample(s);

	st->took_ns = clock_now_ns() - t0;
	st->snap = snap;
	snprintf(st->last_end, sizeof(st->last_end), "%s", snap->target_end);
	pthread_mutex_lock(&st->lock);
	st->sample_seq++;
	pthread_mutex_unlock(&st->lock);
	return snap->target_exited;
}

/* What woke the loop besides its clock: a scrape's request (rendered
 * here), or a signal (returns true, its number in *signo). */
static bool serve_woken(struct serve_state *st, int sfd, int epfd, uint32_t *signo)
{
	struct epoll_event ev[2];
	int n = epoll_wait(epfd, ev, 2, 0);

	for (int i = 0; i < n; i++) {
		if (ev[i].data.fd == st->want_fd) {
			uint64_t v;
			if (read(st->want_fd, &v, sizeof(v)) == (ssize_t)sizeof(v))
				serve_render(st);
			continue;
		}
		struct signalfd_siginfo si;
		if (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
			*signo = si.ssi_signo;
			return true;
		}
	}
	return false;
}

/* Until a signal, -n samples, or the -p target's exit; returns the exit code. */
static int serve_loop(struct serve_state *st, struct session *s, const struct cli_options *o,
		      const sigset_t *sigs)
{
	uint64_t period = (uint64_t)(o->delay_s * 1e9), due = clock_now_ns() + period;
	/* The signals (blocked in every thread) as an fd, and the scrapes'
	 * requests for a page: one epoll fd the engine's clock polls beside
	 * its own wake-ups. */
	int sfd = signalfd(-1, sigs, SFD_CLOEXEC), epfd = epoll_create1(EPOLL_CLOEXEC);
	struct epoll_event es = {.events = EPOLLIN, .data.fd = sfd},
			   ew = {.events = EPOLLIN, .data.fd = st->want_fd};
	uint32_t signo = 0;

	if (sfd < 0 || epfd < 0 || epoll_ctl(epfd, EPOLL_CTL_ADD, sfd, &es) != 0 ||
	    epoll_ctl(epfd, EPOLL_CTL_ADD, st->want_fd, &ew) != 0) {
		fprintf(stderr, "retop: --serve cannot wait for its signals (%s)\n",
			strerror(errno));
		if (sfd >= 0)
			close(sfd);
		if (epfd >= 0)
			close(epfd);
		return EXIT_RUNTIME;
	}
	for (long n = 1; o->iterations == 0 || n < o->iterations;
	     n++, due = session_next_due(due, period)) {
		enum session_wake w;
		bool sig = false;
		while (!sig && (w = session_run(s, due, epfd)) != SESSION_DUE)
			if (w == SESSION_FD)
				sig = serve_woken(st, sfd, epfd, &signo);
		if (sig) {
			log_info("serve", "signal %u: stopping", signo);
			break;
		}
		if (serve_sample(st, s)) {
			fprintf(stderr, "retop: PID %d %s; tracing stopped\n", o->pid,
				st->last_end[0] ? st->last_end : "exited");
			break;
		}
	}
	close(epfd);
	close(sfd);
	return 0;
}

/* Limits of the HTTP side (stated in retop(8), --serve).  One address gets
 * a small share, so a client that hoards connections cannot take them all;
 * a connection that sends nothing for the timeout is closed, which ends
 * both idle keep-alives and requests whose headers stopped coming. */
#define SERVE_CONN_LIMIT 512u		/* connections open at once, all clients */
#define SERVE_CONN_PER_ADDR 32u		/* connections open at once from one address */
#define SERVE_CONN_TIMEOUT_S 10u	/* seconds a connection may stay silent */
#define SERVE_CONN_MEMORY (16u * 1024u) /* request headers and buffers, per connection */
#define SERVE_FD_RESERVE 1024u		/* descriptors kept for probes, maps and files */
#define SERVE_FD_WANT (SERVE_CONN_LIMIT + SERVE_FD_RESERVE)

/* The connection limit the open-file limit allows: raise the soft limit
 * toward the hard one first (every connection is a descriptor, and so is
 * every probe), then leave SERVE_FD_RESERVE for the rest of retop. */
static unsigned serve_conn_limit(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
		return 16;
	if (rl.rlim_cur < SERVE_FD_WANT && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max < SERVE_FD_WANT ? rl.rlim_max : SERVE_FD_WANT;
		if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
			getrlimit(RLIMIT_NOFILE, &rl);
	}
	if (rl.rlim_cur >= SERVE_FD_WANT)
		return SERVE_CONN_LIMIT;
	if (rl.rlim_cur < SERVE_FD_RESERVE / 2 + 32)
		return 16;
	return (unsigned)(rl.rlim_cur - SERVE_FD_RESERVE / 2) / 2;
}

/* One thread polls every connection with epoll and never blocks on a
 * client: it reads what has arrived and writes what the socket takes, so
 * idle and half-sent connections cost a slot each and nothing else, and a
 * scrape is answered between them.  It only ever copies the latest page:
 * attach, sampling and SDK requests stay on the main thread. */
static struct MHD_Daemon *serve_start_http(struct serve_state *st, int fd)
{
	unsigned limit = serve_conn_limit();
	unsigned per_addr = SERVE_CONN_PER_ADDR < limit ? SERVE_CONN_PER_ADDR : limit;

	if (limit < SERVE_CONN_LIMIT)
		log_warn("serve",
			 "open-file limit allows %u HTTP connections, not %u: raise it (ulimit -n)",
			 limit, SERVE_CONN_LIMIT);
	return mhd.start_daemon(MHD_USE_EPOLL_INTERNAL_THREAD, 0, NULL, NULL, serve_handler, st,
				MHD_OPTION_LISTEN_SOCKET, fd, MHD_OPTION_CONNECTION_LIMIT, limit,
				MHD_OPTION_PER_IP_CONNECTION_LIMIT, per_addr,
				MHD_OPTION_CONNECTION_TIMEOUT, SERVE_CONN_TIMEOUT_S,
				MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)SERVE_CONN_MEMORY,
				MHD_OPTION_END);
}

int serve_run(const struct cli_options *o)
{
	struct serve_state st = {.lock = PTHREAD_MUTEX_INITIALIZER,
				 .pid_label = !o->no_pid_label,
				 .want_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)};
	pthread_condattr_t ca;
	struct session *s = NULL;
	struct MHD_Daemon *d = NULL;
	char err[ERR_LEN];
	sigset_t sigs;
	int fd, ret = EXIT_RUNTIME;

	/* Blocked before any thread exists, so every thread inherits it; never
	 * unblocked: a second SIGTERM pending would kill us on the way out. */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);
	signal(SIGPIPE, SIG_IGN);
	/* A page, its gzip and each scrape's copy are megabytes (21 MB of
	 * text for a thousand functions): mapped and unmapped whole, never
	 * kept in the heap once freed (glibc raises its threshold for mmap to
	 * the largest block freed, up to 32 MiB, and then keeps such blocks:
	 * retop stayed at 113 MiB resident with a thousand functions). */
	mallopt(M_MMAP_THRESHOLD, 1 << 20);
	/* The scrapes wait for a page on the monotonic clock. */
	if (st.want_fd < 0 || pthread_condattr_init(&ca) != 0 ||
	    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) != 0 ||
	    pthread_cond_init(&st.rendered, &ca) != 0) {
		fprintf(stderr, "retop: --serve cannot start (eventfd: %s)\n", strerror(errno));
		if (st.want_fd >= 0)
			close(st.want_fd);
		return EXIT_RUNTIME;
	}
	pthread_condattr_destroy(&ca);
	/* Library and port first: either missing is found before any probe
	 * goes in. */
	if (dynlib_load(&mhd_lib, err) != 0) {
		fprintf(stderr, "retop: --serve: %s\n", err);
		ret = EXIT_RUNTIME;
		goto out;
	}
	fd = serve_listen(o->serve_addr, err);
	if (fd < 0) {
		fprintf(stderr, "retop: %s\n", err);
		ret = fd == -EINVAL ? EXIT_USAGE : EXIT_RUNTIME;
		goto out;
	}
	/* Serving from the start: /metrics answers (retop_ready 0) while the
	 * binary is indexed, the SDK asked and the probes attached. */
	if (serve_publish_starting(&st) == 0)
		d = serve_start_http(&st, fd);
	if (!d) {
		fprintf(stderr, "retop: cannot start the HTTP server on %s\n", o->serve_addr);
		close(fd);
	} else if (session_launch(o, LAUNCH_ATTACH, &s, NULL) == EXIT_OK) {
		serve_sample(&st, s); /* the first scrape sees every series, at 0 */
		fprintf(stderr, "retop: serving /metrics on %s (%zu functions; SIGTERM stops)\n",
			o->serve_addr, session_count(s));
		ret = serve_loop(&st, s, o, &sigs);
	}
	/* No page is rendered from here on: a scrape takes the last one. */
	pthread_mutex_lock(&st.lock);
	st.stopping = true;
	pthread_cond_broadcast(&st.rendered);
	pthread_mutex_unlock(&st.lock);
	if (d)
		mhd.stop_daemon(d); /* joins the HTTP thread and closes fd */
	session_close(s);
	serve_buf_unref(st.page);
	serve_buf_unref(st.gz);
out:
	close(st.want_fd);
	pthread_cond_destroy(&st.rendered);
	pthread_mutex_destroy(&st.lock);
	return ret;
}
