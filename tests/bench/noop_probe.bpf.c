// SPDX-License-Identifier: GPL-2.0
// The floor of tests/bench/overhead.sh: a uprobe program that does nothing.
// Attached at the same file offsets retop uses, it costs exactly the trap,
// the single-step and the BPF dispatch that no uprobe tracer can avoid.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

SEC("uprobe")
int noop(void *ctx)
{
	return 0;
}
