#include "interlock.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "code_walk.h"
#include "elf_image.h"
#include "entry_count.h"
#include "entry_probe.h"
#include "funcs_decode.h"
#include "gopclntab.h"
#include "log.h"
#include "runtime_rules.h"
#include "uprobe_insn.h"

/* ---- the verdict on the function's own bytes */

static int refuse(struct func_info *f, const char *why)
{
	f->rets.traceable = TRACEABLE_NO;
	return retsites_set_reason(&f->rets, "%s", why);
}

/* What the pc-to-SP table says, checked against the decode. */
struct pcsp_facts {
	uint64_t end;	   /* the table's span: the end of the last instruction */
	uint64_t flat_end; /* the end of the first range, SP delta 0 */
	char why[160];
};

static void pcsp_walk(const struct func_index *idx, const struct func_info *f, const uint8_t *bits,
		      size_t stop, struct pcsp_facts *out)
{
	struct gopclntab_pciter it;
	uint64_t s, e;
	int32_t v;
	int n = gopclntab_pcsp(idx->pcln, f->pcln_index, &it);
	size_t ri = 0;

	out->end = out->flat_end = 0;
	out->why[0] = '\0';
	if (n) {
		snprintf(out->why, sizeof(out->why), "%s",
			 n == -ENOENT ? "no pc-to-SP table" : "pc-to-SP table corrupt");
		return;
	}
	for (bool first = true; (n = gopclntab_pciter_next(&it, &s, &e, &v)) == 1; first = false) {
		if (first && v != 0) {
			snprintf(out->why, sizeof(out->why),
				 "pc-to-SP table: SP delta %d at the entry", v);
			return;
		}
		if (first)
			out->flat_end = e;
		if (e > stop) {
			snprintf(out->why, sizeof(out->why),
				 "pc-to-SP table runs to +0x%llx, past the decoded code (+0x%zx)",
				 (unsigned long long)e, stop);
			return;
		}
		if (s < e && !code_walk_starts(bits, s)) {
			snprintf(out->why, sizeof(out->why),
				 "pc-to-SP table: change at +0x%llx is not an instruction boundary",
				 (unsigned long long)s);
			return;
		}
		for (; ri < f->rets.count && retsites_get(&f->rets, ri)->offset < e; ri++)
			if (v != 0) {
				snprintf(out->why, sizeof(out->why),
					 "pc-to-SP table: SP delta %d at the RET at +0x%x", v,
					 retsites_get(&f->rets, ri)->offset);
				return;
			}
		out->end = e;
	}
	if (n < 0)
		snprintf(out->why, sizeof(out->why), "pc-to-SP table corrupt");
	else if (ri < f->rets.count)
		snprintf(out->why, sizeof(out->why), "RET at +0x%x past the pc-to-SP table",
			 retsites_get(&f->rets, ri)->offset);
}

/* .symtab and DWARF, each on its own, against the table's code size. */
static const char *check_sources(const struct func_index *idx, const struct func_info *f,
				 uint64_t table_size, char *buf, size_t len)
{
	const struct elf_symbol *syms, *sym;
	size_t nsyms = elf_image_func_symbols(idx->img, &syms);

	if (nsyms > 0) {
		if (!(sym = elf_symbol_at(syms, nsyms, f->entry)))
			return "no .symtab function at the entry .gopclntab gives";
		if (sym->size && sym->size != table_size) {
			snprintf(
			    buf, len,
			    "size 0x%llx in .symtab disagrees with the pc-to-SP table's 0x%llx",
			    (unsigned long long)sym->size, (unsigned long long)table_size);
			return buf;
		}
	}
	if (f->dwarf && f->dwarf->high_pc > f->dwarf->low_pc &&
	    f->dwarf->high_pc - f->dwarf->low_pc != table_size) {
		snprintf(buf, len,
			 "size 0x%llx in DWARF disagrees with the pc-to-SP table's 0x%llx",
			 (unsigned long long)(f->dwarf->high_pc - f->dwarf->low_pc),
			 (unsigned long long)table_size);
		return buf;
	}
	return NULL;
}

/* The evidence that names no other function: one reason, or NULL. */
static const char *check_own(const struct func_index *idx, struct retsites_engine *eng,
			     const struct func_info *f, const uint8_t *code, const uint8_t *bits,
			     size_t stop, const struct pcsp_facts *pcsp, char *buf, size_t len)
{
	const char *why;

	if ((why = uprobe_insn_check(code, code_walk_insn_end(bits, 0, stop)))) {
		snprintf(buf, len, "entry: %s", why);
		return buf;
	}
	for (size_t i = 0; i < f->rets.count; i++) {
		uint32_t off = retsites_get(&f->rets, i)->offset;
		if (off >= stop || !code_walk_starts(bits, off)) {
			snprintf(buf, len, "RET at +0x%x is not an instruction boundary", off);
			return buf;
		}
		if ((why = uprobe_insn_check(code + off,
					     code_walk_insn_end(bits, off, stop) - off))) {
			snprintf(buf, len, "RET at +0x%x: %s", off, why);
			return buf;
		}
	}
	if (pcsp->why[0])
		return pcsp->why;
	if (pcsp->end != f->size) {
		snprintf(buf, len, "size 0x%llx (%s) disagrees with the pc-to-SP table's 0x%llx",
			 (unsigned long long)f->size, func_source_name(f->source),
			 (unsigned long long)pcsp->end);
		return buf;
	}
	if (f->size == 0 || stop < f->size ||
	    (f->size < stop && !code_walk_starts(bits, f->size))) {
		snprintf(buf, len,
			 "the decode from the entry does not end at +0x%llx on a boundary",
			 (unsigned long long)f->size);
		return buf;
	}
	return check_sources(idx, f, pcsp->end, buf, len);
}

/* Assembly may use R14 as a scratch register: then the key read at a RET
 * is not the one read at the entry. */
static const char *check_r14(struct retsites_engine *eng, const struct func_info *f,
			     const uint8_t *code, const uint8_t *bits, char *buf, size_t len)
{
	char text[96];

	for (uint64_t off = 0; off < f->size; off++) {
		if (!code_walk_starts(bits, off))
			continue;
		if (retsites_disasm_one(eng, code + off, f->size - off, f->entry + off, text,
					sizeof(text)) <= 0)
			return "assembly that does not decode";
		if (runtime_rules_writes_r14(text)) {
			snprintf(buf, len,
				 "assembly that writes R14, the g register (+0x%llx: %.80s)",
				 (unsigned long long)off, text);
			return buf;
		}
	}
	return NULL;
}

/* A direct jmp at code[off] (E9 rel32, EB rel8, whole before size): its
 * target, relative to code, in *target. */
static bool jmp_target(const uint8_t *code, uint64_t off, uint64_t size, int64_t *target)
{
	if (code[off] == 0xEB && off + 2 <= size) {
		*target = (int64_t)(off + 2) + (int8_t)code[off + 1];
		return true;
	}
	if (code[off] == 0xE9 && off + 5 <= size) {
		int32_t rel;
		memcpy(&rel, code + off + 1, 4);
		*target = (int64_t)(off + 5) + rel;
		return true;
	}
	return false;
}

/* The first direct jmp (at an instruction start) out of [0, size): a tail
 * jump.  Its calls leave by another function's RET, with a key this
 * function's RET probes never see.  -1 when there is none. */
int64_t interlock_tail_jump(const uint8_t *code, const uint8_t *bits, uint64_t size,
			    int64_t *target)
{
	/* The instruction starts, a byte of the map at a time. */
	for (uint64_t base = 0; base < size; base += 8)
		for (unsigned starts = bits[base / 8]; starts; starts &= starts - 1) {
			uint64_t off = base + (unsigned)__builtin_ctz(starts);
			if (off >= size)
				return -1;
			if (jmp_target(code, off, size, target) &&
			    (*target < 0 || (uint64_t)*target >= size))
				return (int64_t)off;
		}
	return -1;
}

/* The verdict on f's own bytes, taken on the thread that decoded them
 * (funcs_decode.h): c->code[0..span) is f's bytes up to the next entry,
 * c->code[0..code_end) what retsites_find() decoded.  -ENOMEM only. */
static int judge_code(const void *ctx, const struct func_index *idx, struct func_info *f,
		      const struct funcs_code *c)
{
	const struct interlock_opts *o = ctx;
	struct retsites_engine *eng = c->eng;
	const uint8_t *code = c->code;
	size_t code_end = c->code_end, span = c->span;
	uint8_t *bits = c->bits;
	struct pcsp_facts pcsp;
	char buf[200];
	const char *why;
	uint8_t flags = 0;

	memset(bits, 0, span / 8 + 1);
	size_t stop = retsites_boundaries(eng, code, code_end, f->entry, bits);
	pcsp_walk(idx, f, bits, stop, &pcsp);
	/* The evidence the next function needs: the decode ends exactly where
	 * the table says the code does, and only int3 padding follows up to
	 * the next entry. */
	f->interlock = INTERLOCK_CHECKED;
	uint64_t k = code_end;
	while (k < span && code[k] == 0xCC)
		k++;
	if (stop == code_end && k == span)
		f->interlock |= INTERLOCK_TAIL_CLEAN;
	if (f->rets.traceable == TRACEABLE_NO)
		return 0; /* already refused, with its own reason */
	/* Markers such as go:textfipsstart name an address in the padding
	 * between functions: no instruction of theirs runs. */
	if (code_end == 0 || code[0] == 0xCC)
		return refuse(f, "no code: a linker marker, not a function");
	/* The bytes first: their reason says the most about the harm. */
	if ((why = check_own(idx, eng, f, code, bits, stop, &pcsp, buf, sizeof(buf))))
		return refuse(f, why);
	gopclntab_func_flags(idx->pcln, f->pcln_index, &flags);
	if ((why = runtime_rules_check(f->name, flags)))
		return refuse(f, why);
	if ((flags & GOPCLNTAB_FLAG_ASM) && (why = check_r14(eng, f, code, bits, buf, sizeof(buf))))
		return refuse(f, why);
	f->entry_probe_off =
	    o && o->entry_probe_first ? 0 : entry_probe_place(code, bits, stop, pcsp.flat_end);
	/* No prologue: a leaf's first emulated instruction, where there is
	 * one, keeps the single step out of its calls. */
	bool leaf = false;
	if (!f->entry_probe_off && !(o && o->entry_probe_first) &&
	    !uprobe_insn_emulated(code, stop) && !(flags & GOPCLNTAB_FLAG_ASM))
		leaf = (f->entry_probe_off =
			    entry_probe_leaf(eng, code, bits, stop, pcsp.flat_end, f->entry)) != 0;
	f->entry_emulated =
	    uprobe_insn_emulated(code + f->entry_probe_off, stop - f->entry_probe_off);
	f->entry_counts_calls =
	    entry_count_check(idx, f, code, bits, stop, f->entry_probe_off, &f->entry_jcc_cc);
	if (leaf) {
		/* No prologue, no restart: entry_probe_leaf() proved each call
		 * reaches its probe once.  Its jump is no restart's. */
		f->entry_counts_calls = true;
		f->entry_jcc_cc = ENTRY_COUNT_NO_CC;
	}
	/* Calls that leave through a tail jump never reach one of its RETs:
	 * they would stay in flight for ever. */
	int64_t tail_target, tail = interlock_tail_jump(code, bits, f->size, &tail_target);
	if (f->rets.count > 0 && tail >= 0) {
		const struct func_info *to = funcs_by_addr(idx, f->entry + (uint64_t)tail_target);
		f->rets.traceable = TRACEABLE_ENTRY_ONLY;
		return retsites_set_reason(&f->rets,
					   "leaves through a tail jump too (+0x%llx to %s): those "
					   "calls never reach its RETs; calls counted, no duration",
					   (unsigned long long)tail,
					   to ? to->name : "another function");
	}
	/* The BPF side counts hits per RET site in a fixed array. */
	if (f->rets.count > RETOP_MAX_RET_SITES) {
		f->rets.traceable = TRACEABLE_ENTRY_ONLY;
		return retsites_set_reason(&f->rets,
					   "%u RET sites, more than %d: durations unavailable",
					   f->rets.count, RETOP_MAX_RET_SITES);
	}
	/* A body that is one RET (a method returning its receiver): an entry
	 * and a return probe at one address; the entry alone counts calls. */
	if (f->rets.count > 0 && retsites_get(&f->rets, 0)->offset == 0) {
		f->rets.traceable = TRACEABLE_ENTRY_ONLY;
		return retsites_set_reason(
		    &f->rets, "its only instruction is its RET: calls counted, no duration");
	}
	return 0;
}

/* The neighbour's evidence: refuse f unless the function before it ends
 * cleanly at f's entry.  Both must have been judged. */
static int check_prev(const struct func_index *idx, struct func_info *f)
{
	struct func_info *prev = funcs_prev(idx, f);
	char why[200];

	if (!prev || f->rets.traceable == TRACEABLE_NO)
		return 0;
	if ((prev->interlock & INTERLOCK_TAIL_CLEAN))
		return 0;
	snprintf(why, sizeof(why), "the code of %s before it does not end cleanly at this entry",
		 prev->name);
	return refuse(f, why);
}

int interlock_judge(struct func_index *idx, struct func_info *f, const struct interlock_opts *o,
		    char *err)
{
	const struct funcs_judge j = {.judge = judge_code, .ctx = o};
	struct func_info *prev;
	int ret = funcs_decode(idx, f, &j, err);

	if (ret)
		return ret;
	/* The previous function's evidence too; a failure to decode it
	 * leaves f without it, and so refused. */
	if ((prev = funcs_prev(idx, f)))
		funcs_decode(idx, prev, &j, NULL);
	if (check_prev(idx, f))
		return err_set(err, ENOMEM, "%s: out of memory", f->name);
	return 0;
}

void interlock_judge_all(struct func_index *idx, const struct interlock_opts *o, unsigned nthreads)
{
	const struct funcs_judge j = {.judge = judge_code, .ctx = o};

	funcs_decode_all(idx, nthreads, &j);
	/* Each function's neighbour is judged once every thread is done. */
	for (size_t i = 0; i < idx->count; i++)
		if (idx->funcs[i].rets_resolved)
			check_prev(idx, &idx->funcs[i]);
}

/* ---- at attach time */

static uint64_t seal_of(const struct interlock_verdict *v)
{
	static const char key;
	uint64_t h = 0xcbf29ce484222325ull ^ (uint64_t)(uintptr_t)&key;
	const uint8_t *p = (const uint8_t *)v;
	size_t n = offsetof(struct interlock_verdict, seal);

	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	return h;
}

bool interlock_sealed(const struct interlock_verdict *v)
{
	return v && v->f && v->seal == seal_of(v);
}

/* The descriptor is the file that was indexed (funcs_load checked it);
 * what can still change is its content, written in place. */
static int check_identity(const struct func_index *idx, struct interlock_verdict *v, char *err)
{
	int fd = elf_image_fd(idx->img);
	struct stat st;

	if (fd < 0 || fstat(fd, &st) != 0)
		return err_set(err, fd < 0 ? EBADF : errno, "%s: %s", idx->path,
			       strerror(fd < 0 ? EBADF : errno));
	if ((uint64_t)st.st_dev != idx->file_dev || (uint64_t)st.st_ino != idx->file_ino ||
	    (uint64_t)st.st_size != idx->file_size ||
	    (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec != idx->file_mtime_ns)
		return err_set(err, ESTALE,
			       "%s was written in place since it was indexed: refusing to attach "
			       "(retop indexes a binary again only when a new file replaces it)",
			       idx->path);
	funcs_file_path(idx, v->path, sizeof(v->path));
	v->dev = idx->file_dev;
	v->ino = idx->file_ino;
	v->image = idx->image;
	return 0;
}

int interlock_approve(const struct func_index *idx, const struct func_info *f,
		      struct interlock_verdict *v, char *err)
{
	int ret;

	memset(v, 0, sizeof(*v));
	if (f->inline_only) {
		/* No code of its own: only its inline marks, added by
		 * interlock_approve_marks(), go in. */
		if ((ret = check_identity(idx, v, err)) != 0) {
			memset(v, 0, sizeof(*v));
			return ret;
		}
		v->f = f;
		v->entry_only = true;
		v->marks_only = true;
		v->seal = seal_of(v);
		return 0;
	}
	if (!f->rets_resolved || !(f->interlock & INTERLOCK_CHECKED))
		return err_set(err, EINVAL, "%s: not checked by the interlock", f->name);
	if (f->rets.traceable == TRACEABLE_NO)
		return err_set(err, EINVAL, "%s: not traceable: %s", f->name,
			       retsites_reason(&f->rets));
	if (f->file_offset == 0)
		return err_set(err, EINVAL, "%s: entry 0x%llx is not in an executable segment",
			       f->name, (unsigned long long)f->entry);
	ret = check_identity(idx, v, err);
	if (ret) {
		memset(v, 0, sizeof(*v));
		return ret;
	}
	v->f = f;
	v->entry_offset = f->file_offset + f->entry_probe_off;
	v->entry_only =
	    f->rets.traceable == TRACEABLE_ENTRY_ONLY || f->rets.count > RETOP_MAX_RET_SITES;
	v->entry_counts_calls = f->entry_counts_calls;
	v->entry_site = RETOP_ENTRY_SITE(
	    (v->entry_only ? RETOP_ENTRY_ONLY : 0) |
		(f->entry_counts_calls && f->entry_jcc_cc < 16 ? RETOP_ENTRY_JCC : 0) |
		(f->entry_emulated ? 0 : RETOP_ENTRY_STEPPED),
	    f->entry_jcc_cc < 16 ? f->entry_jcc_cc : 0);
	if (v->entry_only && f->rets.count > RETOP_MAX_RET_SITES)
		err_set(err, 0, "%u RET sites, more than %d: durations unavailable", f->rets.count,
			RETOP_MAX_RET_SITES);
	else if (v->entry_only)
		err_set(err, 0, "%s", retsites_reason(&f->rets));
	for (size_t i = 0; !v->entry_only && i < f->rets.count; i++) {
		uint32_t off = retsites_get(&f->rets, i)->offset;
		if (off == 0 || off >= f->size) {
			memset(v, 0, sizeof(*v));
			return err_set(err, EINVAL, "%s: RET site +0x%x outside the function",
				       f->name, off);
		}
		v->ret_offsets[v->nrets++] = f->file_offset + off;
	}
	v->seal = seal_of(v);
	return 0;
}

int interlock_approve_marks(const struct func_index *idx, const struct func_info *f,
			    struct interlock_verdict *v, size_t *sites, size_t *counted, char *why,
			    char *err)
{
	struct inline_marks *m;
	int ret;

	*sites = *counted = 0;
	if (why)
		why[0] = '\0';
	if (!interlock_sealed(v) || v->f != f)
		return err_set(err, EINVAL, "%s: inline marks without the function's approval",
			       f->name);
	if (!idx->inl_known || f->inlined_sites == 0)
		goto none;
	if (!(m = malloc(sizeof(*m))))
		return err_set(err, ENOMEM, "%s: out of memory", f->name);
	char perr[ERR_LEN];
	ret = inline_marks_prove(idx, f, m, perr);
	if (ret == -ENOMEM) {
		free(m);
		return ret;
	}
	v->nmarks = 0;
	for (size_t i = 0; !ret && i < m->n; i++) {
		struct inline_mark_site *site = &m->site[i];
		uint64_t off;
		if (!site->counted)
			continue;
		/* The byte the kernel sees through the descriptor is the one
		 * proven (the file is unchanged: check_identity). */
		if (elf_image_vaddr_to_offset(idx->img, site->addr, &off) != 0 || off == 0) {
			site->counted = false;
			snprintf(site->why, sizeof(site->why),
				 "its mark at 0x%llx is not in an executable segment",
				 (unsigned long long)site->addr);
			m->counted--;
			continue;
		}
		/* An instruction of the call's line reused as the mark: proven to
		 * run once per call like a NOP, but the kernel must run it right
		 * under a probe (single-stepped, most of them). */
		const char *k = site->insn_len ? uprobe_insn_check(site->insn, site->insn_len)
					       : "its instruction was not decoded";
		if (k) {
			site->counted = false;
			snprintf(site->why, sizeof(site->why),
				 "its mark at 0x%llx is an instruction of the call's line that a "
				 "probe cannot sit on: %.100s",
				 (unsigned long long)site->addr, k);
			m->counted--;
			continue;
		}
		v->mark_stepped[v->nmarks] = !uprobe_insn_emulated(site->insn, site->insn_len);
		v->mark_offsets[v->nmarks++] = off;
	}
	*sites = f->inlined_sites;
	*counted = v->nmarks;
	const char *first = inline_marks_why(m);
	if (why && first)
		snprintf(why, INLINE_MARKS_WHY_LEN, "%s", first);
	else if (why && f->inlined_sites > m->counted)
		snprintf(why, INLINE_MARKS_WHY_LEN, "more than %d marks proven: the first %d count",
			 INLINE_MARKS_MAX, INLINE_MARKS_MAX);
	free(m);
	if (ret == 0) {
		v->seal = seal_of(v);
		if (v->nmarks > 0 || !v->marks_only)
			return 0;
	} else if (!v->marks_only) {
		v->seal = seal_of(v);
		return 0;
	} else if (why) {
		snprintf(why, INLINE_MARKS_WHY_LEN, "%.190s", perr);
	}
none:
	if (!v->marks_only)
		return 0;
	memset(v, 0, sizeof(*v));
	return err_set(err, ENOENT,
		       "%s: exists only inlined (%u sites): none of its inlined calls can be "
		       "counted%s%s",
		       f->name, f->inlined_sites, why && why[0] ? ": " : "", why ? why : "");
}

int interlock_copy_marks(const struct interlock_verdict *proven, struct interlock_verdict *v,
			 char *err)
{
	if (!interlock_sealed(proven) || !interlock_sealed(v) || proven->f != v->f ||
	    proven->dev != v->dev || proven->ino != v->ino || proven->image != v->image)
		return err_set(err, EINVAL, "%s: no earlier proof of its inline marks in this file",
			       v && v->f ? v->f->name : "?");
	memcpy(v->mark_offsets, proven->mark_offsets, sizeof(v->mark_offsets));
	memcpy(v->mark_stepped, proven->mark_stepped, sizeof(v->mark_stepped));
	v->nmarks = proven->nmarks;
	v->seal = seal_of(v);
	return 0;
}
