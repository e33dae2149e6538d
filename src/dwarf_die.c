/* dwarf_info's storage and libdwarf helpers (dwarf_internal.h): the string
 * arena, the type cache, attributes read with every error accounted for,
 * and types' names, sizes and Go kinds. */
#include "dwarf_internal.h"

#include "log.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* ---- storage ----------------------------------------------------------- */

char *dw_arena_strdup(struct info_priv *p, const char *s)
{
	size_t len = strlen(s) + 1;
	struct str_chunk *c = p->chunks;
	if (!c || c->cap - c->used < len) {
		size_t cap = len > ARENA_CHUNK ? len : ARENA_CHUNK;
		c = malloc(sizeof(*c) + cap);
		if (!c)
			return NULL;
		c->cap = cap;
		c->used = 0;
		/* An oversized string gets its own chunk behind the current one
		 * so the current chunk's free space is not wasted. */
		if (len > ARENA_CHUNK && p->chunks) {
			c->next = p->chunks->next;
			p->chunks->next = c;
		} else {
			c->next = p->chunks;
			p->chunks = c;
		}
	}
	char *dst = c->data + c->used;
	memcpy(dst, s, len);
	c->used += len;
	return dst;
}

int dw_grow(void **arr, size_t *cap, size_t need, size_t elem)
{
	if (need <= *cap)
		return 0;
	size_t ncap = *cap ? *cap * 2 : 256;
	while (ncap < need)
		ncap *= 2;
	void *n = realloc(*arr, ncap * elem);
	if (!n)
		return -ENOMEM;
	*arr = n;
	*cap = ncap;
	return 0;
}

struct type_slot *dw_type_find(struct type_cache *tc, Dwarf_Off off)
{
	size_t mask = tc->cap - 1;
	size_t i = (size_t)((off * 0x9E3779B97F4A7C15ull) >> 20) & mask;
	while (tc->slots[i].off && tc->slots[i].off != off)
		i = (i + 1) & mask;
	return &tc->slots[i];
}

/* Keep the load factor under 1/2 so probes stay short. */
int dw_type_reserve(struct type_cache *tc)
{
	if ((tc->used + 1) * 2 <= tc->cap)
		return 0;
	struct type_cache n = {.cap = tc->cap ? tc->cap * 2 : 1024, .used = tc->used};
	n.slots = calloc(n.cap, sizeof(*n.slots));
	if (!n.slots)
		return -ENOMEM;
	for (size_t i = 0; i < tc->cap; i++)
		if (tc->slots[i].off)
			*dw_type_find(&n, tc->slots[i].off) = tc->slots[i];
	free(tc->slots);
	*tc = n;
	return 0;
}

/* ---- libdwarf helpers -------------------------------------------------- */

/* Turn a DW_DLV_ERROR into one error line and free libdwarf's error. */
int dw_fail(struct loader *L, const char *what)
{
	const char *msg = L->derr ? dwarf_errmsg(L->derr) : "unknown error";
	int rc = err_set(L->err, EINVAL,
			 "%s: corrupt DWARF (%s: %s); rebuild the binary or "
			 "strip its DWARF with -ldflags=-w",
			 L->path, what, msg);
	if (L->derr)
		dwarf_dealloc_error(L->dbg, L->derr);
	L->derr = NULL;
	return rc;
}

int dw_oom(struct loader *L)
{
	return err_set(L->err, ENOMEM, "%s: out of memory while reading DWARF", L->path);
}

/* 0 with *val set, ABSENT, or a negative errno (message set). */
int dw_attr_udata(struct loader *L, Dwarf_Die die, Dwarf_Half at, Dwarf_Unsigned *val)
{
	Dwarf_Attribute attr;
	int res = dwarf_attr(die, at, &attr, &L->derr);
	if (res == DW_DLV_ERROR)
		return dw_fail(L, "dwarf_attr");
	if (res == DW_DLV_NO_ENTRY)
		return ABSENT;
	/* gcc's DWARF 5 implicit_const (cgo): formsdata reads it; < 0 is absent. */
	Dwarf_Half form = 0;
	Dwarf_Signed sv = -1;
	res = dwarf_whatform(attr, &form, &L->derr);
	if (res == DW_DLV_OK && (form == DW_FORM_implicit_const || form == DW_FORM_sdata)) {
		res = dwarf_formsdata(attr, &sv, &L->derr);
		*val = (Dwarf_Unsigned)sv;
		res = res == DW_DLV_OK && sv < 0 ? DW_DLV_NO_ENTRY : res;
	} else if (res == DW_DLV_OK)
		res = dwarf_formudata(attr, val, &L->derr);
	dwarf_dealloc_attribute(attr);
	if (res == DW_DLV_ERROR)
		return dw_fail(L, "reading a constant");
	return res == DW_DLV_OK ? 0 : ABSENT;
}

int dw_attr_flag(struct loader *L, Dwarf_Die die, Dwarf_Half at, bool *val)
{
	Dwarf_Attribute attr;
	Dwarf_Bool b = 0;
	*val = false;
	int res = dwarf_attr(die, at, &attr, &L->derr);
	if (res == DW_DLV_ERROR)
		return dw_fail(L, "dwarf_attr");
	if (res == DW_DLV_NO_ENTRY)
		return ABSENT;
	res = dwarf_formflag(attr, &b, &L->derr);
	dwarf_dealloc_attribute(attr);
	if (res == DW_DLV_ERROR)
		return dw_fail(L, "dwarf_formflag");
	*val = b != 0;
	return res == DW_DLV_OK ? 0 : ABSENT;
}

/* A reference attribute as a .debug_info-global offset. */
int dw_attr_ref(struct loader *L, Dwarf_Die die, Dwarf_Half at, Dwarf_Off *off)
{
	Dwarf_Attribute attr;
	int res = dwarf_attr(die, at, &attr, &L->derr);
	if (res == DW_DLV_ERROR)
		return dw_fail(L, "dwarf_attr");
	if (res == DW_DLV_NO_ENTRY)
		return ABSENT;
	res = dwarf_global_formref(attr, off, &L->derr);
	dwarf_dealloc_attribute(attr);
	if (res == DW_DLV_ERROR)
		return dw_fail(L, "dwarf_global_formref");
	return res == DW_DLV_OK ? 0 : ABSENT;
}

int dw_die_name(struct loader *L, Dwarf_Die die, char **name)
{
	*name = NULL;
	int res = dwarf_diename(die, name, &L->derr);
	if (res == DW_DLV_ERROR)
		return dw_fail(L, "dwarf_diename");
	if (res != DW_DLV_OK)
		*name = NULL;
	return res == DW_DLV_OK ? 0 : ABSENT;
}

int dw_die_tag(struct loader *L, Dwarf_Die die, Dwarf_Half *tag)
{
	return dwarf_tag(die, tag, &L->derr) == DW_DLV_OK ? 0 : dw_fail(L, "dwarf_tag");
}

int dw_offdie(struct loader *L, Dwarf_Off off, Dwarf_Die *die)
{
	int res = dwarf_offdie_b(L->dbg, off, true, die, &L->derr);
	if (res == DW_DLV_OK)
		return 0;
	if (res == DW_DLV_ERROR)
		return dw_fail(L, "dwarf_offdie_b");
	return err_set(L->err, EINVAL,
		       "%s: corrupt DWARF (no DIE at offset 0x%llx); rebuild "
		       "the binary",
		       L->path, (unsigned long long)off);
}

/* ---- types ------------------------------------------------------------- */

/* Byte size of a type, looking through typedefs and qualifiers.  Go gives
 * pointers no DW_AT_byte_size, so pointers take the CU's address size. */
int dw_type_size(struct loader *L, Dwarf_Die die, uint64_t *size)
{
	Dwarf_Die cur = die;
	int rc = 0;
	*size = 0;
	for (int hop = 0; hop < TYPE_HOPS_MAX; hop++) {
		Dwarf_Unsigned sz;
		Dwarf_Half tag;
		Dwarf_Off next;
		int res = dwarf_bytesize(cur, &sz, &L->derr);
		if (res == DW_DLV_ERROR) {
			rc = dw_fail(L, "dwarf_bytesize");
			break;
		}
		if (res == DW_DLV_OK) {
			*size = sz;
			break;
		}
		if ((rc = dw_die_tag(L, cur, &tag)))
			break;
		if (tag == DW_TAG_pointer_type || tag == DW_TAG_reference_type ||
		    tag == DW_TAG_rvalue_reference_type) {
			*size = L->addr_size;
			break;
		}
		if (tag != DW_TAG_typedef && tag != DW_TAG_const_type &&
		    tag != DW_TAG_volatile_type && tag != DW_TAG_restrict_type)
			break;
		if ((res = dw_attr_ref(L, cur, DW_AT_type, &next)) != 0) {
			rc = res < 0 ? res : 0;
			break;
		}
		if (cur != die)
			dwarf_dealloc_die(cur);
		cur = NULL;
		if ((rc = dw_offdie(L, next, &cur)))
			break;
	}
	if (cur && cur != die)
		dwarf_dealloc_die(cur);
	return rc;
}

/* Go's DW_AT_go_kind (reflect.Kind) of a type, looking through typedefs:
 * Go names a type's kind on the DIE that describes it, and some of its
 * typedefs (error's) leave it to the type they name.  0 when absent. */
#define DW_AT_GO_KIND 0x2900
int dw_type_kind(struct loader *L, Dwarf_Die die, uint8_t *kind)
{
	Dwarf_Die cur = die;
	int rc = 0;

	*kind = 0;
	for (int hop = 0; hop < TYPE_HOPS_MAX; hop++) {
		Dwarf_Unsigned k;
		Dwarf_Half tag;
		Dwarf_Off next;
		if ((rc = dw_attr_udata(L, cur, DW_AT_GO_KIND, &k)) != ABSENT) {
			if (rc == 0 && k < 256)
				*kind = (uint8_t)k;
			break;
		}
		rc = 0;
		if ((rc = dw_die_tag(L, cur, &tag)) || tag != DW_TAG_typedef)
			break;
		if ((rc = dw_attr_ref(L, cur, DW_AT_type, &next)) != 0) {
			rc = rc < 0 ? rc : 0;
			break;
		}
		if (cur != die)
			dwarf_dealloc_die(cur);
		cur = NULL;
		if ((rc = dw_offdie(L, next, &cur)))
			break;
	}
	if (cur && cur != die)
		dwarf_dealloc_die(cur);
	return rc;
}

/* Name, size and Go kind of the type DIE at off, through the cache. */
int dw_type_lookup(struct loader *L, Dwarf_Off off, const char **name, uint64_t *size,
		   uint8_t *kind)
{
	if (dw_type_reserve(&L->types))
		return dw_oom(L);
	struct type_slot *slot = dw_type_find(&L->types, off);
	if (slot->off) {
		*name = slot->name;
		*size = slot->size;
		*kind = slot->kind;
		return 0;
	}
	Dwarf_Die die;
	char *dname;
	int rc = dw_offdie(L, off, &die);
	if (rc)
		return rc;
	rc = dw_die_name(L, die, &dname);
	if (rc >= 0)
		rc = dw_type_size(L, die, size);
	if (rc >= 0)
		rc = dw_type_kind(L, die, kind);
	dwarf_dealloc_die(die);
	if (rc < 0)
		return rc;
	*name = NULL;
	if (dname && !(*name = dw_arena_strdup(L->priv, dname)))
		return dw_oom(L);
	slot->off = off;
	slot->name = *name;
	slot->size = *size;
	slot->kind = *kind;
	L->types.used++;
	return 0;
}
