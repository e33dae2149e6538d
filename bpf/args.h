/* Arguments and results, included by retop.bpf.c after its maps: Go's
 * register ABI, the strings of a call's arguments kept for its slow-call
 * record. */
#ifndef RETOP_BPF_ARGS_H
#define RETOP_BPF_ARGS_H

static __always_inline __u64 arg_reg(struct pt_regs *ctx, __u32 i)
{
	switch (i) {
	case 0: return ctx->rax;
	case 1: return ctx->rbx;
	case 2: return ctx->rcx;
	case 3: return ctx->rdi;
	case 4: return ctx->rsi;
	case 5: return ctx->r8;
	case 6: return ctx->r9;
	case 7: return ctx->r10;
	default: return ctx->r11;
	}
}

/* Register i of the nine (arg_reg) for an index known only at run time:
 * each case a load of its own at a constant offset, in assembly, which the
 * compiler cannot fold into one load at a computed offset (the verifier
 * refuses a modified context pointer). */
#define RET_REG(field)                                                                             \
	({                                                                                         \
		__u64 v_;                                                                          \
		asm volatile("%0 = *(u64 *)(%1 + %2)"                                              \
			     : "=r"(v_)                                                            \
			     : "r"(ctx), "i"(__builtin_offsetof(struct pt_regs, field)));          \
		v_;                                                                                \
	})
static __always_inline __u64 ret_reg(struct pt_regs *ctx, __u32 i)
{
	switch (i) {
	case 0: return RET_REG(rax);
	case 1: return RET_REG(rbx);
	case 2: return RET_REG(rcx);
	case 3: return RET_REG(rdi);
	case 4: return RET_REG(rsi);
	case 5: return RET_REG(r8);
	case 6: return RET_REG(r9);
	case 7: return RET_REG(r10);
	default: return RET_REG(r11);
	}
}

/* The first bytes of the string whose pointer is in register r. */
static __always_inline void args_read_str(struct retop_args *a, __u32 k, __u32 r)
{
	__u64 n;

	if (r >= RETOP_ARG_REGS - 1 || k >= RETOP_ARG_STRS)
		return;
	n = a->regs[r + 1];
	if (n > RETOP_ARG_STR_LEN)
		n = RETOP_ARG_STR_LEN;
	asm volatile("" : "+r"(n));
	if (n == 0 || n > RETOP_ARG_STR_LEN)
		return;
	if (bpf_probe_read_user(a->str[k], n, (void *)a->regs[r]) == 0)
		a->str_len[k] = (__u32)n;
}

/* The integer registers and the strings they point to: the arguments at
 * the entry, the results at a RET (the same registers, from RAX on). */
static __always_inline void read_regs(struct pt_regs *ctx, struct retop_args *a, __u8 s0, __u8 s1)
{
	for (__u32 i = 0; i < RETOP_ARG_REGS; i++)
		a->regs[i] = arg_reg(ctx, i);
	a->str_len[0] = a->str_len[1] = 0;
	args_read_str(a, 0, s0);
	args_read_str(a, 1, s1);
}

/* Capture the arguments of this call, if the operator asked for them. */
static __always_inline void note_args(struct pt_regs *ctx, struct retop_func_stats *st,
				      const struct retop_inflight_key *key)
{
	__u32 slot = key->func_id, zero = 0;
	struct retop_args *a;

	if (slot >= RETOP_MAX_FUNCS || !args_spec[slot].on)
		return;
	a = bpf_map_lookup_elem(&args_scratch, &zero);
	if (!a)
		return;
	read_regs(ctx, a, args_spec[slot].str_reg[0], args_spec[slot].str_reg[1]);
	if (bpf_map_update_elem(&inflight_args, key, a, BPF_ANY) != 0)
		__sync_fetch_and_add(&st->args_lost, 1);
}

#endif
