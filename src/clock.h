/* The one clock of the engine and its faces: CLOCK_MONOTONIC in ns, the
 * clock of BPF's bpf_ktime_get_ns(), so that user space and the probes'
 * times compare. */
#ifndef RETOP_CLOCK_H
#define RETOP_CLOCK_H

#include <stdint.h>

uint64_t clock_now_ns(void);

#endif
