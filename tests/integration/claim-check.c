/* The sweep's compare-and-claim (retop_claim in bpf/retop.bpf.c) on records
 * put in the in-flight map by hand: a record holding another call than the
 * one judged is left untouched, the judged call is claimed once (its record
 * a tombstone, the slot's in-flight count one less), and a missing record,
 * a tombstone or a returning call are never claimed nor created.  Prints
 * one line per failure; exit 0 when all hold, 77 without the rights. */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "retop.h"
#include "retop.skel.h"

static int failures;

#define CHECK(cond, ...)                                                                           \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			printf("claim-check: " __VA_ARGS__);                                       \
			putchar('\n');                                                             \
			failures++;                                                                \
		}                                                                                  \
	} while (0)

static int claim(struct retop *skel, const struct retop_inflight_key *k, __u64 start)
{
	struct retop_claim c = {.key = *k, .start_ns = start};
	LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = &c, .ctx_size_in = sizeof(c));

	if (bpf_prog_test_run_opts(bpf_program__fd(skel->progs.retop_claim), &opts) != 0)
		return -errno;
	return (int)c.claimed;
}

static int lookup(struct retop *skel, const struct retop_inflight_key *k, struct retop_inflight_val *v)
{
	return bpf_map_lookup_elem(bpf_map__fd(skel->maps.inflight), k, v);
}

int main(void)
{
	struct retop *skel = retop__open_and_load();
	struct retop_inflight_key k = {.tgid = 4242, .func_id = 3, .g = 0xc000001000, .depth = 0x200};
	struct retop_inflight_key other = k;
	struct retop_inflight_val v = {.start_ns = 2000000000ull, .tid = 7}, got;
	int fd, r;

	if (!skel) {
		printf("claim-check: cannot load retop's BPF programs: %s\n", strerror(errno));
		return errno == EPERM || errno == EACCES ? 77 : 1;
	}
	fd = bpf_map__fd(skel->maps.inflight);
	skel->bss->slot_inflight[3] = 1;
	bpf_map_update_elem(fd, &k, &v, BPF_NOEXIST);

	/* The record holds a newer call in the same frame: not claimed. */
	r = claim(skel, &k, 1000000000ull);
	CHECK(r == 0, "a record holding another call was claimed (%d)", r);
	CHECK(lookup(skel, &k, &got) == 0 && got.start_ns == v.start_ns && got.tid == 7,
	      "the newer call's record changed: start %llu", (unsigned long long)got.start_ns);
	CHECK(skel->bss->slot_inflight[3] == 1, "in flight %lld, expected 1",
	      (long long)skel->bss->slot_inflight[3]);

	/* The judged call: claimed once, its record a tombstone. */
	r = claim(skel, &k, v.start_ns);
	CHECK(r == 1, "the judged call was not claimed (%d)", r);
	CHECK(lookup(skel, &k, &got) == 0 && got.start_ns == RETOP_START_ORPHANED,
	      "the claimed call's record is not a tombstone");
	CHECK(skel->bss->slot_inflight[3] == 0, "in flight %lld after the claim, expected 0",
	      (long long)skel->bss->slot_inflight[3]);
	r = claim(skel, &k, v.start_ns);
	CHECK(r == 0, "the same call was claimed twice (%d)", r);
	CHECK(skel->bss->slot_inflight[3] == 0, "in flight %lld after a second claim, expected 0",
	      (long long)skel->bss->slot_inflight[3]);

	/* A call its RET is taking out is the RET's. */
	v.start_ns = RETOP_START_RETURNING;
	bpf_map_update_elem(fd, &k, &v, BPF_EXIST);
	r = claim(skel, &k, RETOP_START_RETURNING);
	CHECK(r == 0, "a returning call was claimed (%d)", r);
	CHECK(lookup(skel, &k, &got) == 0 && got.start_ns == RETOP_START_RETURNING,
	      "a returning call's record changed");

	/* No record: nothing claimed, nothing created. */
	other.depth = 0x300;
	r = claim(skel, &other, 3000000000ull);
	CHECK(r == 0, "a missing record was claimed (%d)", r);
	CHECK(lookup(skel, &other, &got) != 0, "a claim created a record");

	retop__destroy(skel);
	if (!failures)
		printf("claim: newer call kept, judged call claimed once (tombstone, in flight 1 -> 0), "
		       "returning call and missing record untouched\n");
	return failures ? 1 : 0;
}
