#include "probes.h"

#include <bpf/bpf.h>
#include <errno.h>
#include <linux/bpf.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* From the kernel's uapi (Linux 6.6); the build host's headers may be
 * older than the kernel retop runs on. */
#define RETOP_BPF_TRACE_UPROBE_MULTI 48

struct link_create_uprobe_multi {
	__u32 prog_fd;
	__u32 target_fd;
	__u32 attach_type;
	__u32 flags;
	__u64 path;
	__u64 offsets;
	__u64 ref_ctr_offsets;
	__u64 cookies;
	__u32 cnt;
	__u32 multi_flags;
	__u32 pid;
	__u32 pad;
};

struct probe_set {
	int multi_fd; /* -1 when perf links are used */
	struct bpf_link **links;
	size_t count;
};

static int uprobe_multi_link(int prog_fd, const char *binary, int pid, const unsigned long *offsets,
			     const __u64 *cookies, size_t n)
{
	struct link_create_uprobe_multi attr;

	memset(&attr, 0, sizeof(attr));
	attr.prog_fd = (__u32)prog_fd;
	attr.attach_type = RETOP_BPF_TRACE_UPROBE_MULTI;
	attr.path = (__u64)(unsigned long)binary;
	attr.offsets = (__u64)(unsigned long)offsets;
	attr.cookies = (__u64)(unsigned long)cookies;
	attr.cnt = (__u32)n;
	attr.pid = pid > 0 ? (__u32)pid : 0;
	return (int)syscall(__NR_bpf, BPF_LINK_CREATE, &attr, sizeof(attr));
}

bool probes_multi_supported(void)
{
	struct bpf_insn insns[] = {
		{.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0},
		{.code = BPF_JMP | BPF_EXIT},
	};
	LIBBPF_OPTS(bpf_prog_load_opts, opts, .expected_attach_type = RETOP_BPF_TRACE_UPROBE_MULTI);
	unsigned long offset = 0;
	__u64 cookie = 0;
	int prog, link, err;

	prog = bpf_prog_load(BPF_PROG_TYPE_KPROBE, NULL, "GPL", insns, 2, &opts);
	if (prog < 0)
		return false;
	/* "/" is no binary: a kernel that knows the link type answers EBADF. */
	link = uprobe_multi_link(prog, "/", 0, &offset, &cookie, 1);
	err = link < 0 ? errno : 0;
	if (link >= 0)
		close(link);
	close(prog);
	return link < 0 && err == EBADF;
}

void probes_prepare(struct bpf_program *prog, bool multi)
{
	if (multi)
		bpf_program__set_expected_attach_type(prog,
						      (enum bpf_attach_type)RETOP_BPF_TRACE_UPROBE_MULTI);
}

static int probe_set_attach_perf(struct probe_set *ps, struct bpf_program *prog,
				 const char *binary, int pid, const uint64_t *offsets,
				 const uint64_t *cookies, size_t n, size_t *failed)
{
	ps->links = calloc(n, sizeof(*ps->links));
	if (!ps->links)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		LIBBPF_OPTS(bpf_uprobe_opts, uo, .bpf_cookie = cookies[i], .retprobe = false);
		ps->links[i] = bpf_program__attach_uprobe_opts(prog, pid, binary, (size_t)offsets[i], &uo);
		if (!ps->links[i]) {
			int e = errno;
			*failed = i;
			return -(e ? e : EINVAL);
		}
		ps->count++;
	}
	return 0;
}

int probe_set_attach(struct bpf_program *prog, bool multi, const char *binary, int pid,
		     const uint64_t *offsets, const uint64_t *cookies, size_t n,
		     struct probe_set **out, size_t *failed)
{
	struct probe_set *ps = calloc(1, sizeof(*ps));
	int ret = 0;

	*out = NULL;
	*failed = 0;
	if (!ps || n == 0) {
		free(ps);
		return ps ? -EINVAL : -ENOMEM;
	}
	ps->multi_fd = -1;
	if (multi) {
		unsigned long *offs = calloc(n, sizeof(*offs));
		if (!offs) {
			free(ps);
			return -ENOMEM;
		}
		for (size_t i = 0; i < n; i++)
			offs[i] = (unsigned long)offsets[i];
		ps->multi_fd = uprobe_multi_link(bpf_program__fd(prog), binary, pid, offs,
						 (const __u64 *)cookies, n);
		ret = ps->multi_fd < 0 ? -errno : 0;
		free(offs);
		ps->count = ps->multi_fd < 0 ? 0 : n;
	} else {
		ret = probe_set_attach_perf(ps, prog, binary, pid, offsets, cookies, n, failed);
	}
	if (ret) {
		probe_sets_destroy(&ps, 1);
		return ret;
	}
	*out = ps;
	return 0;
}

size_t probe_set_count(const struct probe_set *ps) { return ps ? ps->count : 0; }

/* Removing a uprobe waits for RCU grace periods (tens of ms on a VM).
 * Closes from several threads at once share the grace periods, so the
 * detach of a whole package (a thousand functions, each set a link) takes
 * a few grace periods, not a thousand: one thread per PROBES_CLOSE_EACH
 * sets, each on a small stack (it only calls close()); past
 * PROBES_CLOSE_MANY sets, one thread a set (a thousand of the demo's, hot
 * in the target: 1.0-1.9 s to exit at four sets a thread, 0.5-0.6 s at
 * one).  The governor's batches, a few sets each, keep two a thread: each
 * thread costs retop a clone. */
#define PROBES_CLOSE_THREADS 1024
#define PROBES_CLOSE_EACH 2
#define PROBES_CLOSE_MANY 64
#define PROBES_CLOSE_STACK (64 * 1024)

struct close_job {
	struct probe_set **sets;
	size_t nsets, first, step;
};

static void probe_set_release(struct probe_set *ps)
{
	if (ps->multi_fd >= 0)
		close(ps->multi_fd);
	for (size_t i = 0; ps->links && i < ps->count; i++)
		bpf_link__destroy(ps->links[i]);
	free(ps->links);
	free(ps);
}

static void *probes_close_some(void *arg)
{
	struct close_job *job = arg;
	for (size_t i = job->first; i < job->nsets; i += job->step)
		if (job->sets[i])
			probe_set_release(job->sets[i]);
	return NULL;
}

void probe_sets_destroy(struct probe_set **sets, size_t n)
{
	pthread_t threads[PROBES_CLOSE_THREADS];
	struct close_job jobs[PROBES_CLOSE_THREADS];
	bool started[PROBES_CLOSE_THREADS] = {false};
	size_t each = n > PROBES_CLOSE_MANY ? 1 : PROBES_CLOSE_EACH;
	size_t nthreads = (n + each - 1) / each;
	pthread_attr_t attr;
	bool small = pthread_attr_init(&attr) == 0;

	if (n == 0)
		return;
	if (nthreads > PROBES_CLOSE_THREADS)
		nthreads = PROBES_CLOSE_THREADS;
	if (small && pthread_attr_setstacksize(&attr, PROBES_CLOSE_STACK))
		small = false;
	for (size_t t = 1; t < nthreads; t++) {
		jobs[t] = (struct close_job){sets, n, t, nthreads};
		started[t] = pthread_create(&threads[t], small ? &attr : NULL, probes_close_some,
					    &jobs[t]) == 0;
	}
	if (small)
		pthread_attr_destroy(&attr);
	/* This thread takes share 0, and the share of any thread that failed. */
	for (size_t t = 0; t < nthreads; t++) {
		if (t > 0 && started[t])
			continue;
		jobs[t] = (struct close_job){sets, n, t, nthreads};
		probes_close_some(&jobs[t]);
	}
	for (size_t t = 1; t < nthreads; t++)
		if (started[t])
			pthread_join(threads[t], NULL);
	for (size_t i = 0; i < n; i++)
		sets[i] = NULL;
}
