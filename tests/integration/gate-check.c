/* The estimate's gate (gated_out in bpf/entry.h), on retop's entry
 * program attached to a function of this test, called with a g of the
 * test's own (R14) as a Go function is: inside a sampled slice, a call
 * counts once in the slice's tally, and a second entry at the same depth
 * before any RET (the prologue's restart of a function whose entry probe
 * sits on its first instruction, single-stepped: no jump tells the restart)
 * is the same call: counted once, not twice (it was counted twice, and so
 * 1/p times too many per restart in an estimate).  Outside a sampled slice
 * nothing counts.  A slice with a cap (gate_cap) wakes the engine once, at
 * the call that reaches it (RETOP_WAKE_SLICE), not before nor after.  A
 * call begun after the entry's window closed (gate_out: user space took
 * the probe out) is not counted.
 * Prints one line per failure; exit 0 when all hold, 77 without the
 * rights. */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "retop.h"
#include "retop.skel.h"

static int failures;

#define CHECK(cond, ...)                                                                           \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			printf("gate-check: " __VA_ARGS__);                                        \
			putchar('\n');                                                             \
			failures++;                                                                \
		}                                                                                  \
	} while (0)

/* The probed function, and a call of it with g in R14 (callee-saved). */
__asm__(".text\n"
	".globl gate_target\n"
	".type gate_target, @function\n"
	"gate_target:\n"
	"\tmov %rdi, %rax\n"
	"\tret\n"
	".size gate_target, .-gate_target\n"
	".globl gate_call\n"
	".type gate_call, @function\n"
	"gate_call:\n"
	"\tpush %r14\n"
	"\tmov %rdi, %r14\n"
	"\tcall gate_target\n"
	"\tpop %r14\n"
	"\tret\n"
	".size gate_call, .-gate_call\n");
void gate_call(void *g);
/* A g: the programs read its stack.hi at offset 8. */
static unsigned long long g[4] = {0, 0x7ffffffff000ull};

/* The wake-ups read so far, and the last one's reason. */
static int wakes;
static unsigned long long woke_why;

static int on_wake(void *ctx, void *data, size_t len)
{
	(void)ctx;
	wakes++;
	if (len >= sizeof(woke_why))
		memcpy(&woke_why, data, sizeof(woke_why));
	return 0;
}

static unsigned long long now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

int main(void)
{
	struct retop *skel = retop__open_and_load();
	LIBBPF_OPTS(bpf_uprobe_opts, uo, .func_name = "gate_target");
	const int slot = 0;

	if (!skel) {
		printf("gate-check: cannot load retop's BPF programs: %s\n", strerror(errno));
		return errno == EPERM || errno == EACCES ? 77 : 1;
	}
	/* An entry probe on a first instruction, single-stepped, timed. */
	uo.bpf_cookie = RETOP_COOKIE(slot, RETOP_ENTRY_SITE(RETOP_ENTRY_STEPPED, 0));
	struct bpf_link *link =
	    bpf_program__attach_uprobe_opts(skel->progs.retop_entry, 0, "/proc/self/exe", 0, &uo);
	if (!link) {
		printf("gate-check: cannot attach the entry probe: %s\n", strerror(errno));
		return 1;
	}
	skel->bss->slot_record[slot] = 1;
	/* One slice of 100 s from now, sampled, the entry's window open. */
	skel->bss->gate_out[slot] = ~0ull;
	skel->bss->gate_base[slot] = now_ns();
	skel->bss->gate_on[slot][0] = 1;
	__atomic_store_n(&skel->bss->gate_len[slot], 100000000000ull, __ATOMIC_RELEASE);

	/* A call, then its restart: the same key (g, depth), no RET between. */
	gate_call(g);
	gate_call(g);
	int fd = bpf_map__fd(skel->maps.func_stats);
	__u32 key = slot;
	struct retop_func_stats st;
	CHECK(bpf_map_lookup_elem(fd, &key, &st) == 0, "no counters");
	CHECK(st.entries == 2, "%llu entry hits, expected 2", (unsigned long long)st.entries);
	CHECK(st.reentries == 1, "%llu re-entries, expected 1", (unsigned long long)st.reentries);
	CHECK(st.begun == 1, "%llu calls begun, expected 1", (unsigned long long)st.begun);
	CHECK(skel->bss->gate_n[slot][0] == 1,
	      "the sampled slice counted %lld calls, expected 1 (the restart is the same call)",
	      (long long)skel->bss->gate_n[slot][0]);

	/* The next slice, not sampled: a call there is not counted. */
	skel->bss->gate_n[slot][0] = 0;
	skel->bss->gate_base[slot] = now_ns() - 100000000000ull;
	g[1] += 4096; /* another goroutine's frame: a new call */
	gate_call(g);
	CHECK(skel->bss->gate_n[slot][0] == 0 && skel->bss->gate_n[slot][1] == 0,
	      "a call outside a sampled slice was counted");

	/* A sampled slice with a cap of 3 calls: the third wakes the
	 * engine, once, with why RETOP_WAKE_SLICE. */
	struct ring_buffer *rb =
	    ring_buffer__new(bpf_map__fd(skel->maps.wakeups), on_wake, NULL, NULL);
	CHECK(rb, "cannot read the wake-ups: %s", strerror(errno));
	skel->bss->gate_cap[slot] = 3;
	skel->bss->gate_base[slot] = now_ns();
	skel->bss->gate_n[slot][0] = 0;
	for (int call = 1; rb && call <= 4; call++) {
		g[1] += 4096;
		gate_call(g);
		ring_buffer__consume(rb);
		CHECK(wakes == (call >= 3),
		      "after call %d of a slice capped at 3: %d wake-ups, expected %d", call,
		      wakes, call >= 3);
	}
	CHECK(skel->bss->gate_n[slot][0] == 4, "the capped slice counted %lld calls, expected 4",
	      (long long)skel->bss->gate_n[slot][0]);
	CHECK(woke_why == RETOP_WAKE_SLICE, "woken for %llu, expected RETOP_WAKE_SLICE (%d)",
	      woke_why, RETOP_WAKE_SLICE);
	ring_buffer__free(rb);

	/* The entry's window closed (the probe is being taken out): a call
	 * in the same sampled slice is not counted. */
	skel->bss->gate_out[slot] = now_ns();
	g[1] += 4096;
	gate_call(g);
	CHECK(skel->bss->gate_n[slot][0] == 4,
	      "a call after the entry's window closed was counted (%lld calls, expected 4)",
	      (long long)skel->bss->gate_n[slot][0]);

	bpf_link__destroy(link);
	retop__destroy(skel);
	if (!failures)
		printf("gate-check: a call and its restart count once in a sampled slice, "
		       "nothing outside; a capped slice wakes the engine once, at its cap; nothing "
		       "after the entry's window closed\n");
	return failures ? 1 : 0;
}
