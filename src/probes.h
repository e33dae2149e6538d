/* Uprobes of one BPF program at several offsets of one binary, attached and
 * detached as a set.  On Linux >= 6.6 a set is one uprobe_multi link (one
 * attach, one cheap detach); older kernels get one perf link per offset.
 * libbpf 1.1 (Debian 12) predates uprobe_multi, hence the raw syscall. */
#ifndef RETOP_PROBES_H
#define RETOP_PROBES_H

#include <bpf/libbpf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct probe_set;

/* Whether the running kernel has uprobe_multi links. */
bool probes_multi_supported(void);
/* Before the object is loaded: programs used with multi links must say so. */
void probes_prepare(struct bpf_program *prog, bool multi);

/* All or nothing: on failure no probe of the set stays attached, and
 * *failed is the index of the offset that failed (perf links only). */
int probe_set_attach(struct bpf_program *prog, bool multi, const char *binary, int pid,
		     const uint64_t *offsets, const uint64_t *cookies, size_t n,
		     struct probe_set **out, size_t *failed);
size_t probe_set_count(const struct probe_set *ps);
/* Detach every set (in parallel) and NULL the array's pointers. */
void probe_sets_destroy(struct probe_set **sets, size_t n);

#endif
