/* The engine's wake-up from BPF (budget_hit in bpf/retop.bpf.c), on retop's
 * entry program attached to a function of this test: with wake_at armed N
 * hits ahead, the N-th hit (and not one before) makes the wakeups ring
 * readable, once, and disarms it; a disarmed count wakes nobody.  Prints one
 * line per failure; exit 0 when all hold, 77 without the rights. */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "retop.h"
#include "retop.skel.h"

static int failures, events;

#define CHECK(cond, ...)                                                                           \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			printf("wake-check: " __VA_ARGS__);                                        \
			putchar('\n');                                                             \
			failures++;                                                                \
		}                                                                                  \
	} while (0)

/* The probed function: a call is one hit of retop_entry. */
__attribute__((noinline)) int wake_target(int x)
{
	__asm__ volatile("" : "+r"(x));
	return x + 1;
}

static int on_event(void *ctx, void *data, size_t len)
{
	(void)ctx;
	(void)data;
	(void)len;
	events++;
	return 0;
}

static void hits(int n)
{
	for (int i = 0; i < n; i++)
		wake_target(i);
}

static void arm(struct retop *skel, __u64 ahead)
{
	skel->bss->wake_at = ahead ? skel->bss->budget_hits + ahead : 0;
}

int main(void)
{
	struct retop *skel = retop__open_and_load();
	LIBBPF_OPTS(bpf_uprobe_opts, uo, .func_name = "wake_target");
	struct ring_buffer *rb;
	struct bpf_link *link;

	if (!skel) {
		printf("wake-check: cannot load retop's BPF programs: %s\n", strerror(errno));
		return errno == EPERM || errno == EACCES ? 77 : 1;
	}
	link = bpf_program__attach_uprobe_opts(skel->progs.retop_entry, 0, "/proc/self/exe", 0, &uo);
	rb = ring_buffer__new(bpf_map__fd(skel->maps.wakeups), on_event, NULL, NULL);
	if (!link || !rb) {
		printf("wake-check: cannot attach the entry probe or read the wakeups: %s\n",
		       strerror(errno));
		return 1;
	}

	/* Disarmed: hits are counted, nobody is woken. */
	arm(skel, 0);
	__u64 before = skel->bss->budget_hits;
	hits(10);
	ring_buffer__poll(rb, 0);
	CHECK(skel->bss->budget_hits == before + 10, "10 hits counted as %llu",
	      (unsigned long long)(skel->bss->budget_hits - before));
	CHECK(events == 0, "%d wake-ups while disarmed", events);

	/* Armed 5 hits ahead: the 5th wakes, once. */
	arm(skel, 5);
	hits(4);
	ring_buffer__poll(rb, 0);
	CHECK(events == 0, "woken after 4 of 5 hits (%d wake-ups)", events);
	hits(1);
	ring_buffer__poll(rb, 1000);
	CHECK(events == 1, "%d wake-ups at the 5th of 5 hits, expected 1", events);
	CHECK(skel->bss->wake_at == 0, "still armed after its wake-up (%llu)",
	      (unsigned long long)skel->bss->wake_at);
	hits(20);
	ring_buffer__poll(rb, 0);
	CHECK(events == 1, "%d wake-ups after 20 more hits, expected still 1", events);

	/* Armed again: one more. */
	arm(skel, 1);
	hits(1);
	ring_buffer__poll(rb, 1000);
	CHECK(events == 2, "%d wake-ups after arming again and one hit, expected 2", events);

	ring_buffer__free(rb);
	bpf_link__destroy(link);
	retop__destroy(skel);
	if (!failures)
		printf("wake-check: disarmed 10 hits woke nobody; armed 5 ahead, the 5th woke once and disarmed; armed again, 1 hit woke\n");
	return failures ? 1 : 0;
}
