/* The Go runtime's rules a probe must keep: the pairing key reads R14 as
 * g and SP on g's stack (docs/ARCHITECTURE.md), so a function that runs
 * without g in R14 or off its goroutine's stack, or writes R14, gets a
 * reason instead of a probe (docs/UPROBES.md). */
#ifndef RETOP_RUNTIME_RULES_H
#define RETOP_RUNTIME_RULES_H

#include <stdbool.h>
#include <stdint.h>

/* Why a runtime function must not be probed (by its name, or by the
 * toolchain's flags, GOPCLNTAB_FLAG_*), or NULL. */
const char *runtime_rules_check(const char *name, uint8_t flags);
/* True when the Intel-syntax instruction text writes R14 (the g register). */
bool runtime_rules_writes_r14(const char *text);

#endif
