/* The UI's view of the session the worker runs: copying what it published,
 * toggling tracing, and leaving a target (asking first while probes are
 * attached; straight back to the picker once the target has exited). */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>

#include "screens.h"

void ui_toggle_trace(struct ui *ui, const struct func_info *f)
{
	struct worker *w = &ui->w;
	bool full = false, queued = false;

	if (ui->exited) {
		ui_status(ui, DR_ERROR, "the target exited: Esc goes back to the processes");
		return;
	}
	worker_lock(w);
	long k = worker_func_at(w, f);
	/* One that exists only inlined has no row in tstate: the live list
	 * and the detail view offer it only once traced. */
	uint8_t st = w->tstate && k >= 0 ? w->tstate[k] : f->inline_only ? TS_TRACING : TS_NONE;
	struct worker_job job = {.kind = st == TS_NONE ? JOB_TRACE : JOB_UNTRACE, .f = f};
	/* ntraced counts attached functions only: one that failed to attach
	 * holds no slot. */
	if (job.kind == JOB_TRACE && w->ntraced >= w->sopts.max_functions)
		full = true;
	else if (st != TS_QUEUED)
		queued = worker_post_locked(w, &job);
	worker_unlock(w);
	if (full)
		ui_status(ui, DR_ERROR,
			  "at most %zu functions are traced at once: raise --max-functions",
			  ui->w.sopts.max_functions);
	else if (!queued && st != TS_QUEUED)
		ui_status(ui, DR_ERROR, "too many requests queued: wait a moment");
	else if (queued && job.kind == JOB_TRACE && !ui->can_trace)
		ui_status(ui, DR_ERROR, "cannot trace: %s", ui->w.trace_err);
}

/* Drop the session (the worker detaches every probe) and show the picker,
 * whatever the stack held: with -p there was no picker below. */
static int ui_to_picker(struct ui *ui)
{
	int pid = ui->target_pid;

	browser_close(ui);
	ui->nfuncs = 0;
	ui->have_snap = false;
	ui->exited = false;
	ui->wstate = WS_NONE;
	ui->idx = NULL;
	worker_post(&ui->w, &(struct worker_job){.kind = JOB_CLOSE});
	ui->depth = 0;
	ui_push(ui, SCR_PICKER);
	ui_status(ui, DR_INFO, "detached from PID %d", pid);
	return UI_REDRAW;
}

int ui_back(struct ui *ui)
{
	enum ui_screen_id top = ui_top(ui);

	if (top == SCR_HELP || top == SCR_DETAIL) {
		ui_pop(ui);
		return UI_REDRAW;
	}
	if (top == SCR_PICKER)
		return UI_HANDLED;
	if (ui->exited)
		return ui_to_picker(ui);
	if (top == SCR_LIVE && ui->depth > 1) {
		ui_pop(ui);
		return UI_REDRAW;
	}
	if (top != SCR_BROWSER)
		return UI_HANDLED;
	/* Leaving the browser ends the session: never drop a trace unasked.
	 * The worker's count, not the last snapshot's: a function attached
	 * since then counts too, and one being attached right now. */
	worker_lock(&ui->w);
	size_t n = ui->w.ntraced;
	bool attaching = worker_busy_locked(&ui->w);
	worker_unlock(&ui->w);
	if (n)
		ui_confirm(ui, ui_to_picker, "Detach %zu traced function%s, back to processes?", n,
			   n == 1 ? "" : "s");
	else if (attaching)
		ui_confirm(ui, ui_to_picker, "Stop attaching, back to processes?");
	else
		return ui_to_picker(ui);
	return UI_REDRAW;
}

/* Take the snapshot under the worker's mutex; once the target has exited
 * the last one stays: it holds the final counters.  The rows are taken by
 * swapping buffers (both hold RETOP_MAX_FUNCS rows): the worker copies
 * each sample into the one it has, and 1,000 rows of 8 KB are not copied
 * a second time here. */
static bool ui_sync_snap_locked(struct ui *ui, struct worker *w)
{
	if (w->snap_seq == ui->snap_seq || ui->paused || ui->exited || !w->snap_funcs)
		return false;
	ui->snap_seq = w->snap_seq;
	ui->snap = w->snap;
	ui->nfuncs = w->snap_n;
	struct snapshot_func *funcs = ui->funcs;
	const struct func_info **fptr = ui->fptr;
	ui->funcs = w->snap_funcs;
	ui->fptr = w->snap_fptr;
	/* w->snap.funcs still names the rows of the last sample, now ours:
	 * we only read them, as the worker does under its mutex. */
	w->snap_funcs = funcs;
	w->snap_fptr = fptr;
	ui->snap.funcs = ui->funcs;
	ui->have_snap = w->snap_seq > 0 && w->state == WS_READY;
	/* Only for the session on screen: a sample the worker takes before it
	 * runs the close we posted must not bring the banner back. */
	if (ui->wstate == WS_READY && ui->have_snap && ui->snap.target_exited &&
	    ui->target_pid > 0) {
		ui->exited = true;
		ui_status(ui, DR_ERROR, "PID %d %s: its probes are gone, the last numbers stay",
			  ui->target_pid, ui->snap.target_end[0] ? ui->snap.target_end : "exited");
	}
	return true;
}

/* Copy what the worker published (under its mutex, briefly). */
bool ui_sync(struct ui *ui)
{
	struct worker *w = &ui->w;
	bool changed = false;
	enum worker_state was = ui->wstate;

	worker_lock(w);
	changed |= ui_sync_snap_locked(ui, w);
	if (w->ticks != ui->ticks_seen) {
		ui->ticks_seen = w->ticks;
		changed = true;
	}
	if (w->progress_seq != ui->progress_seq) {
		ui->progress_seq = w->progress_seq;
		ui_status(ui, DR_INFO, "%s", w->progress);
		changed = true;
	}
	bool busy = worker_busy_locked(w);
	changed |= busy != ui->busy;
	ui->busy = busy;
	/* A session counts only when it is newer than the request: a close
	 * queued before the open must not show the old one. */
	if (was == WS_OPENING && w->session_gen > ui->open_gen && w->state != WS_NONE &&
	    w->state != WS_OPENING) {
		ui->wstate = w->state;
		if (w->state == WS_FAILED) {
			ui_status(ui, DR_ERROR, "%s", w->open_err);
			ui->wstate = WS_NONE;
		}
	}
	if (ui->wstate == WS_READY) {
		ui->idx = w->idx;
		snprintf(ui->target, sizeof(ui->target), "%s", w->target);
		ui->target_pid = w->pid;
		ui->can_trace = w->can_trace;
	}
	worker_unlock(w);
	if (was == WS_OPENING && ui->wstate == WS_READY) {
		if (browser_open(ui) == 0)
			ui_push(ui, SCR_BROWSER);
		else
			ui_status(ui, DR_ERROR, "out of memory");
		changed = true;
	}
	return changed;
}
