#!/usr/bin/env python3
"""The build matrix: Go release x build mode, every cell checked three ways.

For each cell, tests/go/matrix is built with that release's toolchain
(scripts/go-toolchain) and build mode, next to its unstripped twin (the
same flags without -s -w), and then:

  entries  every function of `retop -l` is at the address the twin's symbol
           table (nm) gives it: a single wrong entry fails the cell, and so
           does any warning from -l (the binaries are sound);
  rets     for every function -l calls "full", its RET sites are exactly the
           near RETs objdump -d finds between the twin's symbol and the next;
  trace    main.Work, called exactly 1000 times by the program, is traced
           with retop -b: calls == 1000, nothing in flight or orphaned,
           mean within 5% of the program's own clock, target alive.

A cell is "exact" when all three pass, "refused: REASON" when retop refuses
the binary with one line and the target is left untouched, and FAIL
otherwise.  Under CI (CI set) a cell that cannot be built is a failure, not
a skip.

  matrix.py --out DIR [--releases 1.19,1.26] [--modes ext-stripped,pie-stripped]
            [--calls N] [--markdown]

Needs root, RETOP (the binary under test), objdump and nm (binutils), gcc
for the cgo modes.  Exit 0 when no cell failed, 1 otherwise, 77 when
nothing could be checked outside CI.
"""
import argparse
import bisect
import json
import os
import re
import signal
import subprocess
import sys
import time

SRC = os.environ.get("abs_top_srcdir") or os.path.normpath(
    os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
RETOP = os.environ.get("RETOP") or os.path.join(SRC, "build", "retop")
CI = "CI" in os.environ

RELEASES = ["1.19", "1.21", "1.22", "1.23", "1.24", "1.25", "1.26", "1.27"]
# name: (CGO_ENABLED, go build arguments, unstripped twin or None)
CGO_TAGS = ["-tags", "retop_cgo"]
MODES = {
    "default": ("0", [], None),
    "stripped": ("0", ["-ldflags=-s -w"], "default"),
    "pie": ("0", ["-buildmode=pie"], None),
    "pie-stripped": ("0", ["-buildmode=pie", "-ldflags=-s -w"], "pie"),
    "ext": ("1", CGO_TAGS + ["-ldflags=-linkmode=external"], None),
    "ext-stripped": ("1", CGO_TAGS + ["-ldflags=-s -w -linkmode=external"], "ext"),
    "ext-pie": ("1", CGO_TAGS + ["-buildmode=pie", "-ldflags=-linkmode=external"], None),
    "ext-pie-stripped": ("1", CGO_TAGS + ["-buildmode=pie", "-ldflags=-s -w -linkmode=external"],
                         "ext-pie"),
    "noopt": ("0", ["-gcflags=all=-N -l"], None),
}
FUNC = "main.Work"
TOLERANCE = 0.05
RET_RE = re.compile(r"^\s*([0-9a-f]+):\s+(?:(?:repz?|bnd|notrack)\s+)?ret[qwl]?\b")


class CellError(Exception):
    pass


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def sources():
    out = []
    for d in ("tests/go/matrix", "tests/go/fixture"):
        for n in os.listdir(os.path.join(SRC, d)):
            out.append(os.path.join(SRC, d, n))
    return out


def goroot(release):
    try:
        r = subprocess.run([os.path.join(SRC, "scripts", "go-toolchain"), release],
                           capture_output=True, text=True, timeout=600)
    except subprocess.TimeoutExpired:
        return None, "fetching the toolchain took over 600 s"
    if r.returncode != 0:
        return None, (r.stderr.strip().splitlines() or ["go-toolchain failed"])[-1]
    return r.stdout.strip(), None


def build(root, out_dir, release, mode):
    """Build one binary; skipped when newer than every source."""
    cgo, args, _ = MODES[mode]
    binary = os.path.join(out_dir, "go" + release, "matrix-" + mode)
    newest = max(os.path.getmtime(p) for p in sources())
    if os.path.exists(binary) and os.path.getmtime(binary) > newest:
        return binary
    os.makedirs(os.path.dirname(binary), exist_ok=True)
    env = dict(os.environ, GOTOOLCHAIN="local", GOROOT=root, GOENV="off", GOPROXY="off",
               GOFLAGS="-mod=mod", GO111MODULE="on", CGO_ENABLED=cgo,
               GOCACHE=os.path.join(out_dir, ".gocache"),
               GOPATH=os.path.join(out_dir, ".gopath"))
    for k in ("GOOS", "GOARCH"):
        env.pop(k, None)
    tmp = "%s.%d.tmp" % (binary, os.getpid())
    cmd = [os.path.join(root, "bin", "go"), "build"] + args + ["-o", tmp, "."]
    r = subprocess.run(cmd, cwd=os.path.join(SRC, "tests", "go", "matrix"), env=env,
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise CellError("go%s build %s failed: %s" % (
            release, " ".join(args), " ".join(r.stderr.split())[:300]))
    os.replace(tmp, binary)
    return binary


def twin_symbols(twin):
    """name -> (addr, size) of the twin's text symbols, from nm."""
    r = subprocess.run(["nm", "-S", "--defined-only", twin], capture_output=True, text=True)
    if r.returncode != 0:
        raise CellError("nm %s: %s" % (twin, r.stderr.strip()))
    syms = {}
    for line in r.stdout.splitlines():
        # Names may hold spaces (generic shapes); size is absent for some.
        m = re.match(r"^([0-9a-f]+) (?:[0-9a-f]+ )?([tT]) (.+)$", line)
        if m:
            # A name may be defined more than once (ABI wrappers, copies).
            syms.setdefault(m.group(3), set()).add(int(m.group(1), 16))
    if FUNC not in syms:
        raise CellError("the twin %s has no symbol %s" % (twin, FUNC))
    return syms


def listing(binary):
    r = subprocess.run([RETOP, "-x", binary, "--list", "-o", "json"], capture_output=True,
                       text=True, timeout=120)
    if r.returncode != 0:
        return None, (r.stderr.strip().splitlines() or ["exit %d" % r.returncode])[-1]
    if r.stderr.strip():
        # A warning on a sound binary is a false alarm (DWARF 5 forms, say).
        raise CellError("retop -l warned: %s" % " ".join(r.stderr.split())[:300])
    # Functions that exist only inlined have no code: index-inlined.sh
    # checks those rows.
    return [f for f in map(json.loads, filter(str.strip, r.stdout.splitlines()))
            if not f.get("inline_only")], None


def objdump_rets(binary):
    r = subprocess.run(["objdump", "-d", "--no-show-raw-insn", binary], capture_output=True,
                       text=True)
    if r.returncode != 0:
        raise CellError("objdump -d %s: %s" % (binary, r.stderr.strip()[:200]))
    return sorted(int(m.group(1), 16) for m in map(RET_RE.match, r.stdout.splitlines()) if m)


def addrs(syms, name):
    """The twin's addresses for a pclntab name: the symbol table also names
    ABI wrappers with a suffix the function table leaves out."""
    s = syms.get(name, set()) | syms.get(name + ".abi0", set())
    return s | syms.get(name + ".abiinternal", set()) or None


def check_entries(funcs, syms):
    """Every entry is its name's symbol; a name the symbol table spells
    otherwise (type..eq.[...]) must still be at some symbol's start."""
    starts = set(a for s in syms.values() for a in s)
    wrong, unmatched = [], 0
    for f in funcs:
        s = addrs(syms, f["name"])
        if s is None:
            unmatched += 1
            if f["entry"] not in starts:
                wrong.append("%s at 0x%x, where the symbol table has no function" % (
                    f["name"], f["entry"]))
        elif f["entry"] not in s:
            wrong.append("%s at 0x%x, the symbol table says %s" % (
                f["name"], f["entry"], " or ".join("0x%x" % a for a in sorted(s))))
    if wrong:
        raise CellError("%d wrong entries, e.g. %s" % (len(wrong), wrong[0]))
    return unmatched


def check_rets(funcs, syms, rets):
    """Compare every full function's RET sites with objdump's inside it."""
    starts = sorted(a for s in syms.values() for a in s)
    bad, compared = [], 0
    for f in funcs:
        if f["traceable"] != "full" or not addrs(syms, f["name"]):
            continue
        lo = f["entry"]  # one of the symbol's addresses: check_entries ran
        i = bisect.bisect_right(starts, lo)
        hi = starts[i] if i < len(starts) else lo + max(f["size"], 1)
        want = rets[bisect.bisect_left(rets, lo):bisect.bisect_left(rets, hi)]
        got = sorted(lo + s["offset"] for s in f.get("ret_sites", []))
        compared += len(got)
        if got != want:
            bad.append("%s: retop %s, objdump %s" % (
                f["name"], [hex(a) for a in got], [hex(a) for a in want]))
    if bad:
        raise CellError("%d functions with RET sites unlike objdump's, e.g. %s" % (
            len(bad), bad[0]))
    return compared


def wait_for(pred, secs, what, proc=None):
    end = time.time() + secs
    while time.time() < end:
        v = pred()
        if v:
            return v
        if proc is not None and proc.poll() is not None:
            raise CellError("%s: retop exited %d first" % (what, proc.returncode))
        time.sleep(0.05)
    raise CellError("%s: not within %g s" % (what, secs))


def snapshots(path):
    try:
        with open(path) as fh:
            data = fh.read()
    except FileNotFoundError:
        return []
    return [json.loads(l) for l in data.split("\n")[:-1] if l.strip()]


def func_of(snap):
    fs = [f for f in snap.get("functions", []) if f.get("name") == FUNC]
    return fs[0] if len(fs) == 1 else {}


def trace(binary, tmp, calls):
    ready, out, snap = (os.path.join(tmp, n) for n in ("ready", "out.json", "snap.json"))
    for p in (ready, out, snap):
        if os.path.exists(p):
            os.unlink(p)
    fx = subprocess.Popen([binary, "-ready", ready, "-out", out, "-calls", str(calls),
                           "-workers", "8"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    rp = None
    try:
        wait_for(lambda: os.path.exists(ready), 10, "the program's readiness")
        with open(snap, "w") as so, open(snap + ".err", "w") as se:
            rp = subprocess.Popen([RETOP, "-b", "-p", str(fx.pid), "-t", FUNC, "-d", "0.2",
                                   "-o", "json"], stdout=so, stderr=se)
        try:
            wait_for(lambda: func_of((snapshots(snap) or [{}])[-1]).get("state") == "tracing",
                     15, "retop attaching", rp)
        except CellError as e:
            with open(snap + ".err") as se:
                raise CellError("%s: %s" % (e, " ".join(se.read().split())[:300]))
        fx.send_signal(signal.SIGUSR1)
        wait_for(lambda: os.path.exists(out), 60, "the program's result")
        n = len(snapshots(snap))
        wait_for(lambda: len(snapshots(snap)) > n, 5, "a snapshot after the calls", rp)
        if fx.poll() is not None:
            raise CellError("the program died while traced (exit %d)" % fx.returncode)
        rp.send_signal(signal.SIGINT)
        if rp.wait(10) != 0:
            raise CellError("retop exited %d after SIGINT" % rp.returncode)
    finally:
        for p in (rp, fx):
            if p is not None and p.poll() is None:
                p.kill()
                p.wait()
    with open(out) as fh:
        want = json.load(fh)["per_func"][FUNC]
    got = func_of(snapshots(snap)[-1])
    problems = []
    if got.get("calls") != want["calls"] or want["calls"] != calls:
        problems.append("calls %s, the program made %s" % (got.get("calls"), want["calls"]))
    for k in ("in_flight", "orphans", "unmatched_returns"):
        if got.get(k) != 0:
            problems.append("%s %s" % (k, got.get(k)))
    mean = got.get("mean_ns") or 0
    rel = abs(mean - want["mean_ns"]) / want["mean_ns"] if want["mean_ns"] else 1
    if rel > TOLERANCE:
        problems.append("mean %d ns, the program's %d ns (%.1f%% apart)" % (
            mean, want["mean_ns"], 100 * rel))
    if problems:
        raise CellError("traced: " + "; ".join(problems))
    return "%d/%d calls, mean %.3f ms vs %.3f ms (%+.1f%%)" % (
        got["calls"], want["calls"], mean / 1e6, want["mean_ns"] / 1e6,
        100 * (mean - want["mean_ns"]) / want["mean_ns"])


def target_untouched(binary, tmp):
    """A refused binary: retop -b must exit with one line and the program live."""
    ready = os.path.join(tmp, "ready")
    if os.path.exists(ready):
        os.unlink(ready)
    fx = subprocess.Popen([binary, "-ready", ready], stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL)
    try:
        wait_for(lambda: os.path.exists(ready), 10, "the program's readiness")
        r = subprocess.run([RETOP, "-b", "-p", str(fx.pid), "-t", FUNC, "-n", "1"],
                           capture_output=True, text=True, timeout=30)
        if r.returncode == 0 or r.returncode >= 128:
            raise CellError("retop -b on a refused binary exited %d" % r.returncode)
        if fx.poll() is not None:
            raise CellError("the program died")
    finally:
        fx.kill()
        fx.wait()


def run_cell(root, args, release, mode):
    binary = build(root, args.out, release, mode)
    twin_mode = MODES[mode][2]
    twin = build(root, args.out, release, twin_mode) if twin_mode else binary
    syms = twin_symbols(twin)
    funcs, refusal = listing(binary)
    if funcs is None:
        target_untouched(binary, os.path.dirname(binary))
        return "refused", refusal
    unmatched = check_entries(funcs, syms)
    nrets = check_rets(funcs, syms, objdump_rets(binary))
    traced = trace(binary, os.path.dirname(binary), args.calls)
    counts = {}
    for f in funcs:
        counts[f["traceable"]] = counts.get(f["traceable"], 0) + 1
    return "exact", ("%d functions (%s), 0 wrong entries (%d by address only), "
                     "%d RET sites as objdump; %s" % (
                         len(funcs), ", ".join("%d %s" % (v, k) for k, v in sorted(counts.items())),
                         unmatched, nrets, traced))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True, help="build directory for binaries and GOCACHE")
    ap.add_argument("--releases", default=",".join(RELEASES))
    ap.add_argument("--modes", default=",".join(MODES))
    ap.add_argument("--calls", type=int, default=1000)
    ap.add_argument("--markdown", action="store_true", help="print the README table too")
    args = ap.parse_args()
    args.out = os.path.abspath(args.out)
    releases, modes = args.releases.split(","), args.modes.split(",")
    for m in modes:
        if m not in MODES:
            ap.error("unknown mode %r (modes: %s)" % (m, ", ".join(MODES)))
    results, failed, checked = {}, 0, 0
    for rel in releases:
        root, why = goroot(rel)
        for mode in modes:
            t0 = time.time()
            try:
                if root is None:
                    raise CellError("no Go %s toolchain: %s" % (rel, why))
                verdict, detail = run_cell(root, args, rel, mode)
                checked += 1
            except (CellError, subprocess.TimeoutExpired, OSError, ValueError, KeyError) as e:
                verdict, detail = "FAIL", str(e)
                skip = root is None or "build" in str(e) and " failed" in str(e)
                if skip and not CI:
                    verdict = "skipped"
                else:
                    failed += 1
            results[(rel, mode)] = (verdict, detail)
            print("go%-5s %-16s %-8s %s (%.1f s)" % (rel, mode, verdict, detail,
                                                   time.time() - t0), flush=True)
    if args.markdown:
        print()
        print("| Go | " + " | ".join(modes) + " |")
        print("|---|" + "---|" * len(modes))
        for rel in releases:
            cells = []
            for m in modes:
                v, d = results[(rel, m)]
                cells.append(v if v in ("exact", "FAIL", "skipped") else "%s: %s" % (v, d))
            print("| %s | %s |" % (rel, " | ".join(cells)))
    if failed:
        return 1
    return 0 if checked else 77


if __name__ == "__main__":
    sys.exit(main())
