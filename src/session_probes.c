/* Moving a traced function's probes in and out of every binary the session
 * traces it in (the budget and the deploys move them; each move approved
 * again by the interlock). */
#include "session_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"

void session_forget_marks(struct session_func *sf)
{
	for (size_t k = 0; k < RETOP_MAX_IMAGES; k++) {
		free(sf->marks_v[k]);
		sf->marks_v[k] = NULL;
	}
}

/* Put into binary k the probes sf has in now (the budget may hold its
 * RETs or its entry out): RETs first, as at the attach. */
static int session_probes_in_one(struct session *s, struct session_func *sf, size_t k, bool entry,
				 bool rets, char *err)
{
	struct interlock_verdict v;
	/* Approved again each time: a file may have been written since. */
	int ret = interlock_approve(s->images[k].idx, sf->fi[k], &v, err);

	if (!ret && rets)
		ret = tracer_rets_in(s->tracer, sf->slot, &v, s->attach_pid, err);
	if (!ret && entry)
		ret = tracer_entry_in(s->tracer, sf->slot, &v, s->attach_pid, err);
	return ret;
}

/* Keep v, whose marks were just proven in binary k. */
void session_keep_marks(struct session_func *sf, size_t k, const struct interlock_verdict *v)
{
	if (!sf->marks_v[k] && !(sf->marks_v[k] = malloc(sizeof(*v))))
		return; /* proven again next time */
	*sf->marks_v[k] = *v;
}

/* sf's inline marks in binary k: as proven before in the same file, else
 * proven now. */
static int session_marks_in_one(struct session *s, struct session_func *sf, size_t k, char *err)
{
	struct interlock_verdict v;
	size_t sites, counted;
	int ret = interlock_approve(s->images[k].idx, sf->fi[k], &v, err);

	if (!ret && (!sf->marks_v[k] || interlock_copy_marks(sf->marks_v[k], &v, err) != 0)) {
		ret = interlock_approve_marks(s->images[k].idx, sf->fi[k], &v, &sites, &counted,
					      NULL, err);
		if (!ret)
			session_keep_marks(sf, k, &v);
	}
	if (!ret)
		ret = tracer_marks_in(s->tracer, sf->slot, &v, s->attach_pid, err);
	return ret;
}

int session_marks(struct session *s, struct session_func *sf, bool on, char *err)
{
	int ret = 0;

	if (!on) {
		tracer_marks_out(s->tracer, sf->slot);
		return 0;
	}
	if (!sf->inl_counted || tracer_marks_are_in(s->tracer, sf->slot))
		return 0;
	for (size_t k = 0; !ret && k < s->nimages; k++)
		if (sf->fi[k] && !s->images[k].retired)
			ret = session_marks_in_one(s, sf, k, err);
	return ret;
}

int session_probes_in_image(struct session *s, struct session_func *sf, size_t k, char *why)
{
	int ret = session_probes_in_one(s, sf, k, tracer_entry_is_in(s->tracer, sf->slot),
					tracer_rets_are_in(s->tracer, sf->slot), why);

	if (!ret && tracer_marks_are_in(s->tracer, sf->slot))
		ret = session_marks_in_one(s, sf, k, why);
	return ret;
}

int session_probes_in(struct session *s, struct session_func *sf, bool entry, bool rets, char *err)
{
	int ret = 0;

	for (size_t k = 0; !ret && k < s->nimages; k++)
		if (sf->fi[k] && !s->images[k].retired)
			ret = session_probes_in_one(s, sf, k, entry, rets, err);
	return ret;
}
