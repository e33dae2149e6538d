#include "runtime_rules.h"

#include <string.h>

#include "gopclntab.h"

/* Runtime functions that run without g in R14 or off the goroutine stack:
 * the pairing key {g, g.stack.hi - SP} means nothing there. */

struct runtime_rule {
	const char *name;
	bool prefix;
	const char *why;
};

static const struct runtime_rule runtime_rules[] = {
    {"runtime.gcWriteBarrier", true,
     "write barrier: entered from inside pointer writes with its own register convention"},
    {"runtime.morestack", true, "stack growth: runs while the goroutine's stack is switched"},
    {"runtime.systemstack_switch", false, "a return-address marker for tracebacks, never called"},
    {"runtime.systemstack", false, "switches to the g0 stack"},
    {"runtime.gosave_systemstack_switch", false, "saves state for a stack switch"},
    {"runtime.mcall", false, "switches to the g0 stack and does not return to its caller"},
    /* What mcall runs on g0: each ends in schedule() and never returns, and
     * the next one on the thread begins in the same g0 frame. */
    {"runtime.park_m", false, "runs on g0 through mcall and never returns (schedule)"},
    {"runtime.gosched_m", false, "runs on g0 through mcall and never returns (schedule)"},
    {"runtime.goschedguarded_m", false, "runs on g0 through mcall and never returns (schedule)"},
    {"runtime.gopreempt_m", false, "runs on g0 through mcall and never returns (schedule)"},
    {"runtime.preemptPark", false, "runs on g0 through mcall and never returns (schedule)"},
    {"runtime.goyield_m", false, "runs on g0 through mcall and never returns (schedule)"},
    {"runtime.goexit0", false, "runs on g0 through mcall and never returns (schedule)"},
    {"runtime.exitsyscall0", false, "runs on g0 through mcall and never returns (schedule)"},
    {"runtime.coroswitch_m", false, "runs on g0 through mcall and never returns"},
    {"runtime.schedule", false, "runs on g0 and never returns: it switches to a goroutine"},
    {"runtime.mstart0", false, "thread start on g0: never returns"},
    {"runtime.mstart1", false, "thread start on g0: never returns"},
    {"runtime.mexit", false, "thread exit on g0: never returns"},
    {"runtime.gogo", false, "jumps into another goroutine: never returns"},
    {"runtime.goexit", false, "the bottom frame of every goroutine: entered by a return"},
    {"runtime.rt0_go", false, "process start: runs before g exists"},
    {"_rt0_", true, "process start: runs before g exists"},
    {"runtime.mstart", false, "thread start: runs before g is in R14"},
    {"runtime.asminit", false, "thread start: runs before g is in R14"},
    {"runtime.settls", false, "sets up thread-local storage before g exists"},
    {"runtime.clone", false, "the new thread starts inside it without g"},
    {"runtime.asmcgocall", true, "switches to the g0 stack to call C"},
    {"runtime.cgocallback", false, "entered from C: no g in R14"},
    {"crosscall2", false, "entered from C: no g in R14"},
    {"runtime.setg_gcc", false, "sets g for C code"},
    {"runtime.load_g", false, "loads g for C code"},
    {"runtime.save_g", false, "saves g for C code"},
    {"runtime.sigtramp", false, "signal handler: entered by the kernel, R14 is not g"},
    {"runtime.cgoSigtramp", false, "signal handler: entered by the kernel, R14 is not g"},
    {"runtime.sigprofNonGo", true, "signal handler on a thread without g"},
    {"runtime.sigreturn", true, "returns from a signal through the kernel: never returns"},
    {"runtime.asyncPreempt", false, "entered by a signal at any instruction: R14 may not hold g"},
    {"runtime.debugCallV", true, "debugger call injection: entered at any instruction"},
    {"runtime.duffzero", false,
     "entered in the middle (Duff's device): entries and returns do not pair"},
    {"runtime.duffcopy", false,
     "entered in the middle (Duff's device): entries and returns do not pair"},
    {"runtime.nanotime1", false, "calls the vDSO on the g0 stack"},
    {"runtime.walltime", false, "calls the vDSO on the g0 stack"},
    {"runtime.vgetrandom1", false, "calls the vDSO on the g0 stack"},
    {"runtime.abort", false, "crashes the process on purpose"},
    {"runtime.racecall", true, "switches to the g0 stack to call the race runtime"},
};

const char *runtime_rules_check(const char *name, uint8_t flags)
{
	for (size_t i = 0; i < sizeof(runtime_rules) / sizeof(runtime_rules[0]); i++) {
		const struct runtime_rule *r = &runtime_rules[i];
		/* Every function is asked: most differ at their first byte. */
		if (name[0] != r->name[0])
			continue;
		if (r->prefix ? !strncmp(name, r->name, strlen(r->name)) : !strcmp(name, r->name))
			return r->why;
	}
	/* runtime.debugCall32 ... debugCall65536: frames for injected calls. */
	if (!strncmp(name, "runtime.debugCall", 17) && name[17] >= '0' && name[17] <= '9')
		return "debugger call injection: entered at any instruction";
	/* What the toolchain itself knows, for the releases and functions the
	 * list above does not name. */
	if (flags & GOPCLNTAB_FLAG_TOPFRAME)
		return "the bottom frame of a stack (TOPFRAME): no caller to return to";
	if (flags & GOPCLNTAB_FLAG_SPWRITE)
		return "writes SP (SPWRITE): entry and return may be on different stacks";
	return NULL;
}

/* "r14", "r14d", "r14w", "r14b" of length n. */
static bool is_r14(const char *s, size_t n)
{
	return n >= 3 && !strncmp(s, "r14", 3) &&
	       (n == 3 || (n == 4 && (s[3] == 'd' || s[3] == 'w' || s[3] == 'b')));
}

/* Any operand of ops that is R14 itself (not a memory operand using it). */
static bool any_operand_r14(const char *ops)
{
	while (*ops) {
		while (*ops == ' ' || *ops == ',')
			ops++;
		size_t n = strcspn(ops, ",");
		size_t m = n;
		while (m > 0 && ops[m - 1] == ' ')
			m--;
		if (is_r14(ops, m))
			return true;
		ops += n;
	}
	return false;
}

bool runtime_rules_writes_r14(const char *text)
{
	const char *ops = strchr(text, ' ');
	size_t mlen = ops ? (size_t)(ops - text) : strlen(text);

	if (!ops)
		return false;
	ops++;
	if ((mlen == 4 && !strncmp(text, "xchg", 4)) || (mlen == 4 && !strncmp(text, "xadd", 4)) ||
	    (mlen >= 7 && !strncmp(text, "cmpxchg", 7)))
		return any_operand_r14(ops);
	size_t n = strcspn(ops, ",");
	while (n > 0 && ops[n - 1] == ' ')
		n--;
	if (!is_r14(ops, n))
		return false;
	/* The first operand is the destination, except for these. */
	static const char *const readers[] = {"cmp", "test", "push", "bt", "call", "jmp"};
	for (size_t i = 0; i < sizeof(readers) / sizeof(readers[0]); i++)
		if (strlen(readers[i]) == mlen && !strncmp(text, readers[i], mlen))
			return false;
	return true;
}
