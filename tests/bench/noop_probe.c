// noop_probe BINARY PID OFFSET...: attach the no-op uprobe program of
// noop_probe.bpf.c at each file OFFSET of BINARY (decimal or 0x hex), for
// process PID only (-1: every process); print "ready" once every probe is
// attached, then hold the links until SIGTERM or SIGINT. Exit 1 on failure.
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "noop_probe.skel.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: %s BINARY PID OFFSET...\n", argv[0]);
		return 2;
	}
	const char *binary = argv[1];
	char *end;
	long pid = strtol(argv[2], &end, 10);
	if (*argv[2] == '\0' || *end != '\0') {
		fprintf(stderr, "noop_probe: bad PID '%s'\n", argv[2]);
		return 2;
	}
	int n = argc - 3;
	struct bpf_link **links = calloc((size_t)n, sizeof(*links));
	if (!links)
		return 1;

	/* Blocked until sigsuspend, so a signal cannot slip in before the wait. */
	sigset_t block, old;
	sigemptyset(&block);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGINT);
	sigprocmask(SIG_BLOCK, &block, &old);
	struct sigaction sa = { .sa_handler = on_signal };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);

	struct noop_probe_bpf *skel = noop_probe_bpf__open_and_load();
	if (!skel) {
		fprintf(stderr, "noop_probe: cannot load the BPF program: %s\n", strerror(errno));
		return 1;
	}
	int rc = 0;
	for (int i = 0; i < n; i++) {
		unsigned long long off = strtoull(argv[3 + i], &end, 0);
		if (*argv[3 + i] == '\0' || *end != '\0') {
			fprintf(stderr, "noop_probe: bad offset '%s'\n", argv[3 + i]);
			rc = 2;
			goto out;
		}
		LIBBPF_OPTS(bpf_uprobe_opts, uo, .retprobe = false);
		links[i] = bpf_program__attach_uprobe_opts(skel->progs.noop, (pid_t)pid, binary,
							   (size_t)off, &uo);
		if (!links[i]) {
			fprintf(stderr, "noop_probe: cannot attach at %s+0x%llx: %s\n", binary, off,
				strerror(errno));
			rc = 1;
			goto out;
		}
	}
	printf("ready\n");
	fflush(stdout);
	while (!stop)
		sigsuspend(&old);
out:
	for (int i = 0; i < n; i++)
		bpf_link__destroy(links[i]);
	noop_probe_bpf__destroy(skel);
	free(links);
	return rc;
}
