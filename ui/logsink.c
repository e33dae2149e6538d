/* Log lines while curses owns the terminal: they reach the status line at
 * once and are replayed on stderr after endwin(), so a warning seen for a
 * second on a busy screen is not lost.  Anything else written to fd 2 (a
 * library's own message) would tear the screen: it goes to a file and is
 * copied out after endwin(), as htop does. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "screens.h"

static struct {
	pthread_mutex_t mu;
	char *replay;
	size_t len, cap;
	char last[256];
	enum log_level level;
	uint64_t seq, seen;
	int wake_fd;
	FILE *errtmp;
	int saved_err;
} logsink = {.mu = PTHREAD_MUTEX_INITIALIZER, .wake_fd = -1, .saved_err = -1};

static void logsink_grow_locked(size_t n)
{
	if (logsink.len + n + 2 <= logsink.cap || logsink.cap >= (1u << 20))
		return;
	size_t cap = logsink.cap ? logsink.cap * 2 : 4096;
	while (cap < logsink.len + n + 2)
		cap *= 2;
	char *p = realloc(logsink.replay, cap);
	if (p) { /* else: the line still reaches the status line */
		logsink.replay = p;
		logsink.cap = cap;
	}
}

static void logsink_line(enum log_level level, const char *line, void *ctx)
{
	size_t n = strlen(line);
	(void)ctx;

	pthread_mutex_lock(&logsink.mu);
	logsink_grow_locked(n);
	if (logsink.len + n + 2 <= logsink.cap) {
		memcpy(logsink.replay + logsink.len, line, n);
		logsink.len += n;
		logsink.replay[logsink.len++] = '\n';
	}
	/* The status line has no room for the "retop: " prefix. */
	snprintf(logsink.last, sizeof(logsink.last), "%s",
		 strncmp(line, "retop: ", 7) == 0 ? line + 7 : line);
	logsink.level = level;
	logsink.seq++;
	pthread_mutex_unlock(&logsink.mu);
	if (logsink.wake_fd >= 0) {
		char c = 2;
		ssize_t r = write(logsink.wake_fd, &c, 1);
		(void)r;
	}
}

void logsink_begin(int wake_fd)
{
	int saved = dup(STDERR_FILENO);

	logsink.wake_fd = wake_fd;
	log_set_sink(logsink_line, NULL);
	logsink.errtmp = tmpfile();
	if (saved < 0 || !logsink.errtmp) {
		if (logsink.errtmp)
			fclose(logsink.errtmp);
		logsink.errtmp = NULL;
		if (saved >= 0)
			close(saved);
		return;
	}
	fflush(stderr);
	dup2(fileno(logsink.errtmp), STDERR_FILENO);
	logsink.saved_err = saved;
}

/* After endwin(): fd 2 back, what was written to it, then the log lines. */
void logsink_end(void)
{
	char buf[4096];
	size_t n;

	if (logsink.saved_err >= 0) {
		fflush(stderr);
		dup2(logsink.saved_err, STDERR_FILENO);
		close(logsink.saved_err);
		logsink.saved_err = -1;
		rewind(logsink.errtmp);
		while ((n = fread(buf, 1, sizeof(buf), logsink.errtmp)) > 0)
			fwrite(buf, 1, n, stderr);
		fclose(logsink.errtmp);
		logsink.errtmp = NULL;
	}
	log_set_sink(NULL, NULL);
	logsink.wake_fd = -1;
	if (logsink.len)
		fwrite(logsink.replay, 1, logsink.len, stderr);
	free(logsink.replay);
	logsink.replay = NULL;
	logsink.len = logsink.cap = 0;
}

/* The newest line onto the status line; true when there was one. */
bool logsink_sync(struct ui *ui)
{
	bool changed = false;

	pthread_mutex_lock(&logsink.mu);
	if (logsink.seq != logsink.seen) {
		logsink.seen = logsink.seq;
		ui_status(ui,
			  logsink.level <= LOG_ERROR  ? DR_ERROR
			  : logsink.level == LOG_WARN ? DR_WARN
						      : DR_INFO,
			  "%s", logsink.last);
		changed = true;
	}
	pthread_mutex_unlock(&logsink.mu);
	return changed;
}
