#!/usr/bin/env python3
"""Helpers for the trace-*.sh integration tests (stdlib only).

Reads retop's batch JSON snapshots (one object per line) and a fixture's own
result JSON, and asserts things with messages that say what was expected.
Every check exits 1 with one "snapcheck: ..." line per failure on stderr.

  lines SNAP                      number of complete snapshot lines
  wait SNAP N SECONDS [PID]       until SNAP has N complete lines; fails early
                                  when PID (retop) is gone
  waitfor SNAP FUNC FIELD VALUE SECONDS [PID]
                                  until the last snapshot's FUNC FIELD is VALUE
  after SNAP EPOCH SECONDS [PID]  until a snapshot's "time" is >= EPOCH (Unix time)
  gone PID SECONDS                until PID has exited (a zombie counts as exited)
  get SNAP FUNC FIELD [LINE]      a field of FUNC in the last (or LINE-th, 1-based,
                                  negative from the end) snapshot
  exact SNAP FIXTURE FUNC...      status tracing, calls == fixture per_func calls,
                                  in_flight, orphans, unmatched_returns all 0
  inlined SNAP FIXTURE FUNC...    FUNC's inlined calls == the fixture's per_func
                                  inlined_calls, exact, counted at every one of
                                  its inlined_sites; its calls == the fixture's
  timing SNAP FIXTURE TOL FUNC... |mean - fixture's| / fixture's <= TOL; p50 the
                                  same beyond retop's stated bound (the
                                  midpoint of a histogram bucket: 1.6%)
  paths SNAP FIXTURE FUNC         FUNC has 2 RET sites whose hits are the
                                  fixture's paths {valid, invalid}
  status SNAP PREFIX [FUNC...]    every (or each named) function's status
                                  starts with PREFIX
  targets SNAP PID...             the last snapshot's targets are exactly PID...
  wait-targets SNAP SECONDS RETOPPID PID...
                                  until the last snapshot's targets are exactly PID...
  progs                           retop_* BPF programs: "ID NAME HOLDER-PIDS"
  summary SNAP FIXTURE FUNC LABEL one line: calls, mean and p50 against the fixture's
  inside SNAP FIXTURE HITS CALLER CALLEE...
                                  CALLER calls every CALLEE once a call: each
                                  counted exactly (calls == the fixture's) or
                                  marked estimated; nothing in flight, orphaned,
                                  dropped or unmatched; CALLER's
                                  probe_hits_inside (over its calls not evicted)
                                  is HITS (a restart of CALLER adds one: up to
                                  its reentries more), or marked
                                  probe_hits_inside_sampled; it must be HITS
                                  when no CALLEE shed probes
  holds PID                       BPF prog and link ids PID holds: "prog ID"/"link ID"
  released HELD SECONDS           until none of the ids in HELD (from holds) is left
"""
import json
import os
import sys
import time

failures = []


def bad(msg):
    failures.append(msg)


def done():
    for m in failures:
        print("snapcheck: " + m, file=sys.stderr)
    sys.exit(1 if failures else 0)


def die(msg):
    print("snapcheck: " + msg, file=sys.stderr)
    sys.exit(1)


def complete_lines(path):
    try:
        with open(path) as f:
            data = f.read()
    except FileNotFoundError:
        return []
    # A line still being written has no newline yet: ignore it.
    return [l for l in data.split("\n")[:-1] if l.strip()]


def snapshots(path):
    out = []
    for i, l in enumerate(complete_lines(path), 1):
        try:
            out.append(json.loads(l))
        except ValueError as e:
            die("%s line %d is not JSON (%s): %.200s" % (path, i, e, l))
    if not out:
        die("%s holds no snapshot" % path)
    return out


def snapshot(path, index=-1):
    snaps = snapshots(path)
    try:
        return snaps[index]
    except IndexError:
        die("%s has %d snapshots, no snapshot %d" % (path, len(snaps), index))


def func(snap, name):
    fs = [f for f in snap.get("functions", []) if f.get("name") == name]
    if len(fs) != 1:
        die("%s appears %d times in the snapshot (functions: %s)" % (
            name, len(fs), ", ".join(f.get("name", "?") for f in snap.get("functions", []))))
    return fs[0]


def fixture(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        die("cannot read the fixture's result %s: %s" % (path, e))


def fixture_func(fx, name):
    pf = fx.get("per_func", {})
    if name not in pf:
        die("fixture result has no per_func entry for %s" % name)
    return pf[name]


def alive(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


def cmd_lines(args):
    print(len(complete_lines(args[0])))


def cmd_wait(args):
    path, n, secs = args[0], int(args[1]), float(args[2])
    pid = int(args[3]) if len(args) > 3 else None
    deadline = time.monotonic() + secs
    while True:
        got = len(complete_lines(path))
        if got >= n:
            return
        if pid is not None and not alive(pid):
            # One last look: it may have written its last line and exited.
            if len(complete_lines(path)) >= n:
                return
            die("retop (pid %d) exited with %d of the %d snapshots awaited in %s" % (pid, got, n, path))
        if time.monotonic() > deadline:
            die("%s: %d snapshot lines after %g s, waited for %d" % (path, got, secs, n))
        time.sleep(0.02)


def cmd_waitfor(args):
    path, name, field, value, secs = args[0], args[1], args[2], args[3], float(args[4])
    pid = int(args[5]) if len(args) > 5 else None
    deadline = time.monotonic() + secs
    last = None
    while True:
        if complete_lines(path):
            last = func(snapshot(path), name).get(field)
            if str(last) == value:
                return
        if pid is not None and not alive(pid):
            die("retop (pid %d) exited while %s %s was %r, waiting for %s" % (pid, name, field, last, value))
        if time.monotonic() > deadline:
            die("%s %s still %r after %g s, waited for %s" % (name, field, last, secs, value))
        time.sleep(0.02)


def cmd_after(args):
    path, epoch, secs = args[0], float(args[1]), float(args[2])
    pid = int(args[3]) if len(args) > 3 else None
    deadline = time.monotonic() + secs
    while True:
        if complete_lines(path) and snapshot(path).get("time", 0) >= epoch:
            return
        if pid is not None and not alive(pid):
            die("retop (pid %d) exited before a snapshot of time %.3f" % (pid, epoch))
        if time.monotonic() > deadline:
            die("no snapshot of time >= %.3f after %g s" % (epoch, secs))
        time.sleep(0.02)


def cmd_gone(args):
    pid, secs = int(args[0]), float(args[1])
    deadline = time.monotonic() + secs
    while alive(pid):
        if time.monotonic() > deadline:
            die("pid %d still running after %g s" % (pid, secs))
        time.sleep(0.02)


def cmd_get(args):
    idx = int(args[3]) if len(args) > 3 else -1
    if idx > 0:
        idx -= 1
    f = func(snapshot(args[0], idx), args[1])
    if args[2] not in f:
        die("%s has no field %s" % (args[1], args[2]))
    v = f[args[2]]
    print(json.dumps(v) if isinstance(v, (list, dict)) else v)


def check_clean(name, f, what=("in_flight", "orphans", "unmatched_returns")):
    for k in what:
        if f.get(k) != 0:
            bad("%s: %s is %s, expected 0" % (name, k, f.get(k)))


def cmd_exact(args):
    snap, fx = snapshot(args[0]), fixture(args[1])
    for name in args[2:]:
        f, want = func(snap, name), fixture_func(fx, name)["calls"]
        # Exact counts: traced in full, or every call counted at its entry
        # with a sample timed (the default budget's first resort).  A note
        # on errors not counted (a stripped binary's) may follow.
        st = (f.get("status") or "").split("; errors not counted: ")[0]
        if st != "tracing" and not st.startswith("timing-sampled "):
            bad("%s: status %r, expected 'tracing' or 'timing-sampled N%%'" % (name, st))
        if f.get("calls") != want:
            bad("%s: retop counted %s calls, the fixture made %d" % (name, f.get("calls"), want))
        check_clean(name, f)
    done()


def cmd_inside(args):
    snap, fx, hits = snapshot(args[0]), fixture(args[1]), float(args[2])
    names = args[3:]
    for name in names:
        f, want = func(snap, name), fixture_func(fx, name)["calls"]
        if f.get("estimated"):
            # Marked: the interval is stated (a 95% one: the truth may
            # lie outside, so only its presence is checked).
            ci = f.get("calls_ci95")
            if not isinstance(ci, list) or len(ci) != 2 or ci[0] is None:
                bad("%s: estimated without an interval: calls_ci95 %r" % (name, ci))
        elif f.get("calls") != want:
            bad("%s: retop counted %s calls, unmarked; the fixture made %d" % (
                name, f.get("calls"), want))
        check_clean(name, f, ("in_flight", "orphans", "unmatched_returns", "dropped"))
    c = func(snap, names[0])
    got, ev, timed = c.get("probe_hits_inside"), c.get("evicted", 0), c.get("timed_calls", 0)
    known = timed - ev
    if ev and c.get("probe_hits_inside_exact"):
        bad("%s: %d calls evicted, yet probe_hits_inside_exact" % (names[0], ev))
    if c.get("probe_hits_inside_exact") and c.get("probe_hits_inside_sampled"):
        bad("%s: probe hits inside both exact and sampled" % names[0])
    # The callees' probes in all the time: every call not evicted had
    # exactly HITS hits inside, so the average over them is HITS.
    # A prologue restart of CALLER (its stack grew, or a preemption) is
    # one more hit inside its call: at most its reentries more in all.
    callees_full = not any(func(snap, n).get("probes_shed") for n in names[1:])
    lo, hi = hits * known, hits * known + c.get("reentries", 0)
    total = (got or 0) * known
    fits = lo - 0.0005 * known <= total <= hi + 0.0005 * known
    if known > 0 and not fits and (callees_full or not c.get("probe_hits_inside_sampled")):
        bad("%s: probe_hits_inside %s over %d timed calls (%d evicted, %d reentries), "
            "expected %g%s" % (names[0], got, timed, ev, c.get("reentries", 0), hits,
            "" if callees_full else ", or marked probe_hits_inside_sampled"))
    done()


def cmd_inlined(args):
    snap, fx = snapshot(args[0]), fixture(args[1])
    for name in args[2:]:
        f, want = func(snap, name), fixture_func(fx, name)
        if f.get("inlined_calls") != want["inlined_calls"]:
            bad("%s: retop counted %s inlined calls, the fixture made %d" % (
                name, f.get("inlined_calls"), want["inlined_calls"]))
        if f.get("inlined_calls_exact") is not True:
            bad("%s: inlined_calls_exact is %r" % (name, f.get("inlined_calls_exact")))
        if not f.get("inlined_sites") or f.get("inlined_sites_counted") != f.get("inlined_sites"):
            bad("%s: inlined calls counted at %s of %s sites (%s)" % (
                name, f.get("inlined_sites_counted"), f.get("inlined_sites"),
                f.get("inlined_uncounted_why")))
        if f.get("calls") != want["calls"]:
            bad("%s: retop counted %s calls out of line, the fixture made %d" % (
                name, f.get("calls"), want["calls"]))
    done()


# A percentile is the midpoint of its log-linear bucket: within 1.6% of
# the true value (STATS_PERCENTILE_ERROR_PCT in src/stats.h), before any
# difference of clocks.
P50_BOUND = 0.016


def cmd_timing(args):
    snap, fx, tol = snapshot(args[0]), fixture(args[1]), float(args[2])
    for name in args[3:]:
        f, want = func(snap, name), fixture_func(fx, name)
        for k in ("mean_ns", "p50_ns"):
            r, w = f.get(k), want.get(k)
            if not isinstance(r, (int, float)) or not w:
                bad("%s: %s is %r (fixture %r)" % (name, k, r, w))
                continue
            rel = abs(r - w) / w
            allowed = tol + (P50_BOUND if k == "p50_ns" else 0)
            # The program's clock holds what its thread waited for a CPU
            # (mean_wait_ns, p50_nowait_ns, where it reads it): a wait as a
            # trap returns falls outside retop's clock, so retop may be
            # that much under the program's.
            nowait = want.get("p50_nowait_ns") if k == "p50_ns" else None
            wait = want.get("mean_wait_ns", 0) if k == "mean_ns" else (w - nowait if nowait else 0)
            if r < w and wait > 0:
                rel = max(0, w - wait - r) / w
            if rel > allowed:
                bad("%s: %s retop %d vs fixture %d (its thread waited %d for a CPU): "
                    "%.2f%% apart, allowed %.2f%%" % (name, k, r, w, wait, 100 * rel, 100 * allowed))
    done()


def cmd_paths(args):
    snap, fx, name = snapshot(args[0]), fixture(args[1]), args[2]
    f = func(snap, name)
    sites = f.get("ret_sites", [])
    paths = fx.get("paths", {})
    want = sorted([paths.get("valid"), paths.get("invalid")])
    if len(sites) != 2:
        bad("%s: %d RET sites, expected 2 (error and success)" % (name, len(sites)))
    else:
        got = sorted(s.get("hits") for s in sites)
        if got != want:
            bad("%s: RET site hits %s, the fixture's paths valid=%s invalid=%s" % (
                name, ", ".join("+%s (line %s): %s" % (s.get("offset"), s.get("line"), s.get("hits"))
                                for s in sites), paths.get("valid"), paths.get("invalid")))
    done()


def cmd_status(args):
    snap, prefix = snapshot(args[0]), args[1]
    names = args[2:] or [f.get("name") for f in snap.get("functions", [])]
    if not names:
        bad("the snapshot lists no function")
    for name in names:
        st = func(snap, name).get("status", "")
        if not st.startswith(prefix):
            bad("%s: status %r, expected it to start with %r" % (name, st, prefix))
    done()


def target_pids(path):
    return sorted(t.get("pid") for t in snapshot(path).get("targets", []))


def cmd_targets(args):
    got, want = target_pids(args[0]), sorted(int(p) for p in args[1:])
    if got != want:
        bad("targets are pids %s, expected %s" % (got, want))
    done()


def cmd_wait_targets(args):
    path, secs, retop = args[0], float(args[1]), int(args[2])
    want = sorted(int(p) for p in args[3:])
    deadline = time.monotonic() + secs
    got = None
    while True:
        if complete_lines(path):
            got = target_pids(path)
            if got == want:
                return
        if not alive(retop):
            die("retop (pid %d) exited while its targets were %s, waiting for %s" % (retop, got, want))
        if time.monotonic() > deadline:
            die("targets still %s after %g s, waited for %s" % (got, secs, want))
        time.sleep(0.02)


def cmd_summary(args):
    snap, fx, name, label = snapshot(args[0]), fixture(args[1]), args[2], args[3]
    f, want = func(snap, name), fixture_func(fx, name)
    ms = lambda ns: "%.1fms" % (ns / 1e6) if ns >= 1e6 else "%.1fus" % (ns / 1e3)
    wait = want.get("mean_wait_ns")
    print("%s: %s %d calls, retop %s, mean %s vs %s%s, p50 %s vs %s" % (
        label, name, want["calls"], f.get("calls"), ms(f.get("mean_ns", 0)), ms(want.get("mean_ns", 0)),
        " (waited %s for a CPU)" % ms(wait) if wait is not None else "",
        ms(f.get("p50_ns", 0)), ms(want.get("p50_ns", 0))))


def holders():
    """{("prog"|"link", id): [pid...]} from every process's fdinfo."""
    out = {}
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        d = "/proc/%s/fdinfo" % pid
        try:
            fds = os.listdir(d)
        except OSError:
            continue
        for fd in fds:
            try:
                # Other programs' fdinfo may hold any bytes (file names).
                with open(os.path.join(d, fd), errors="replace") as fh:
                    info = dict(l.split(":", 1) for l in fh.read().splitlines() if ":" in l)
            except OSError:
                continue
            if "link_id" in info:
                key = ("link", int(info["link_id"]))
            elif "prog_id" in info and "prog_type" in info:
                key = ("prog", int(info["prog_id"]))
            else:
                continue
            out.setdefault(key, set()).add(int(pid))
    return out


def cmd_progs(args):
    import subprocess
    try:
        progs = json.loads(subprocess.run(["bpftool", "-j", "prog", "show"], check=True,
                                          capture_output=True, text=True).stdout or "[]")
    except (OSError, subprocess.CalledProcessError, ValueError) as e:
        die("bpftool prog show failed: %s" % e)
    h = holders()
    for p in progs:
        if str(p.get("name", "")).startswith("retop_"):
            pids = sorted(h.get(("prog", p["id"]), ()))
            print(p["id"], p["name"], ",".join(map(str, pids)) or "-")


def cmd_holds(args):
    pid = int(args[0])
    for (kind, i), pids in sorted(holders().items()):
        if pid in pids:
            print(kind, i)


def cmd_released(args):
    """released HELD SECONDS: until no prog or link listed in HELD ("prog ID"
    or "link ID" lines, from `holds`) is left in the kernel."""
    import subprocess
    held = [l.split() for l in open(args[0]) if l.strip()]
    deadline = time.time() + float(args[1])
    while True:
        live = {}
        for kind in ("prog", "link"):
            try:
                out = subprocess.run(["bpftool", "-j", kind, "show"], check=True,
                                     capture_output=True, text=True).stdout or "[]"
            except (OSError, subprocess.CalledProcessError) as e:
                die("bpftool %s show failed: %s" % (kind, e))
            for o in json.loads(out):
                live[(kind, o["id"])] = o.get("name", o.get("type", "?"))
        left = ["%s %s (%s)" % (k, i, live[(k, int(i))]) for k, i in held if (k, int(i)) in live]
        if not left:
            return
        if time.time() > deadline:
            die("the kernel still holds: " + " ".join(left))
        time.sleep(0.1)


CMDS = {"lines": (cmd_lines, 1), "wait": (cmd_wait, 3), "get": (cmd_get, 3),
        "exact": (cmd_exact, 3), "inlined": (cmd_inlined, 3), "timing": (cmd_timing, 4), "paths": (cmd_paths, 3),
        "status": (cmd_status, 2), "targets": (cmd_targets, 1), "progs": (cmd_progs, 0),
        "holds": (cmd_holds, 1), "inside": (cmd_inside, 4), "released": (cmd_released, 2), "summary": (cmd_summary, 4), "waitfor": (cmd_waitfor, 5), "after": (cmd_after, 3), "gone": (cmd_gone, 2), "wait-targets": (cmd_wait_targets, 3)}

if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] not in CMDS or len(sys.argv) - 2 < CMDS[sys.argv[1]][1]:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    CMDS[sys.argv[1]][0](sys.argv[2:])
