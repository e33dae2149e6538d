#!/usr/bin/env python3
"""Inlined calls, checked against the compiler's own account.

tests/go/inlined is built by each Go release asked for (system: the go on
PATH, else scripts/go-toolchain 1.NN) in three modes: default, stripped
(-ldflags=-s -w) and PIE.  The oracle is the compiler: `go build
-gcflags=-m` prints one "inlining call to F" line per call site it inlined
in package main (the fixture's parents are kept out of line, so each such
line is one site in the binary).  For every function of package main,
`retop -l -o json` must give inlined_sites equal to the compiler's count;
main.(*Acc).Add must be listed inline-only and main.Scale not.  As root,
each build is also run and traced (retop -b at its defaults): main.Scale,
main.(*Acc).Add and main.Twice (whose marks are instructions of the call's
line, no NOP) count exactly the inlined calls the program made, at
every site (their inline marks, src/inline_marks.h), and main.Scale its
calls out of line.

  inlined.py --out DIR [--releases system,1.26,1.27]

Exit 0 when every cell agrees, 1 when one does not, 77 when no release
could be built.
"""
import argparse
import collections
import json
import os
import re
import signal
import subprocess
import sys
import time

SRC = os.environ.get("abs_top_srcdir") or os.path.dirname(os.path.dirname(
    os.path.dirname(os.path.abspath(__file__))))
RETOP = os.environ.get("RETOP") or os.path.join(
    os.environ.get("abs_top_builddir", os.path.join(SRC, "build")), "retop")
FIXTURE = os.path.join(SRC, "tests", "go", "inlined")
MODES = {"default": [], "stripped": ["-ldflags=-s -w"], "pie": ["-buildmode=pie"]}


def log(msg):
    print("inlined: " + msg, file=sys.stderr)


def go_env(root, out_dir):
    env = dict(os.environ, GOENV="off", GOPROXY="off", GOFLAGS="-mod=mod",
               GO111MODULE="on", CGO_ENABLED="0",
               GOCACHE=os.path.join(out_dir, ".gocache"),
               GOPATH=os.path.join(out_dir, ".gopath"))
    if root:
        env.update(GOTOOLCHAIN="local", GOROOT=root)
    for k in ("GOOS", "GOARCH"):
        env.pop(k, None)
    return env


def go_cmd(root):
    return os.path.join(root, "bin", "go") if root else os.environ.get("GO", "go")


def goroot(release):
    if release == "system":
        return None, None
    r = subprocess.run([os.path.join(SRC, "scripts", "go-toolchain"), release],
                       capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        return None, (r.stderr.strip().splitlines() or ["go-toolchain failed"])[-1]
    return r.stdout.strip(), None


def sources():
    for d in (FIXTURE, os.path.join(SRC, "tests", "go", "fixture")):
        for n in os.listdir(d):
            yield os.path.join(d, n)


def build(root, out_dir, mode):
    binary = os.path.join(out_dir, "inlined-" + mode)
    newest = max(os.path.getmtime(p) for p in sources())
    if os.path.exists(binary) and os.path.getmtime(binary) > newest:
        return binary
    os.makedirs(out_dir, exist_ok=True)
    tmp = "%s.%d.tmp" % (binary, os.getpid())
    r = subprocess.run([go_cmd(root), "build"] + MODES[mode] + ["-o", tmp, "."],
                       cwd=FIXTURE, env=go_env(root, out_dir), capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError("build %s failed: %s" % (mode, " ".join(r.stderr.split())[:300]))
    os.replace(tmp, binary)
    return binary


def oracle(root, out_dir):
    """Sites per function of package main, as the compiler reports them."""
    r = subprocess.run([go_cmd(root), "build", "-gcflags=-m", "-o", os.devnull, "."],
                       cwd=FIXTURE, env=go_env(root, out_dir), capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError("go build -gcflags=-m failed: " + r.stderr[:300])
    sites = collections.Counter()
    for line in r.stderr.splitlines():
        # Package main's functions are named without "main.": F, (*T).M.
        m = re.search(r": inlining call to ((\(\*?\w+\)\.)?\w+)$", line)
        if m:
            sites["main." + m.group(1)] += 1
    return sites


def listing(binary):
    r = subprocess.run([RETOP, "-l", "-x", binary, "-o", "json", "main."],
                       capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        raise RuntimeError("retop -l failed: " + r.stderr[:300])
    return {d["name"]: d for d in map(json.loads, r.stdout.splitlines())}


def check_cell(binary, sites):
    funcs = {n: d for n, d in listing(binary).items() if n.startswith("main.")}
    bad = []
    for name in sorted(set(funcs) | set(sites)):
        d = funcs.get(name)
        if d is None:
            bad.append("%s: inlined at %d sites, not listed" % (name, sites[name]))
        elif d["inlined_sites"] != sites.get(name, 0):
            bad.append("%s: inlined_sites %r, the compiler inlined %d" % (
                name, d["inlined_sites"], sites.get(name, 0)))
    add, scale = funcs.get("main.(*Acc).Add"), funcs.get("main.Scale")
    if not add or not add["inline_only"] or add["traceable"] != "no":
        bad.append("main.(*Acc).Add is not listed inline-only: %r" % add)
    if not scale or scale["inline_only"] or scale["traceable"] != "full":
        bad.append("main.Scale is not listed with code of its own: %r" % scale)
    if sites.get("main.Scale", 0) < 3 or sites.get("main.(*Acc).Add", 0) < 3:
        bad.append("the compiler inlined fewer sites than the fixture has: %r" % dict(sites))
    return bad


def wait_for(cond, secs):
    deadline = time.monotonic() + secs
    while not cond():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def lines(path):
    try:
        with open(path) as f:
            return [l for l in f.read().split("\n")[:-1] if l.strip()]
    except FileNotFoundError:
        return []


def trace_run(binary, work):
    """Run the build and trace it: the last snapshot and the program's result."""
    ready, out, snap = work + ".ready", work + ".out", work + ".snap"
    for p in (ready, out, snap):
        if os.path.exists(p):
            os.remove(p)
    fx = subprocess.Popen([binary, "-ready", ready, "-out", out])
    rt = None
    try:
        if not wait_for(lambda: os.path.exists(ready), 10):
            raise RuntimeError("did not become ready in 10 s")
        with open(snap, "w") as so, open(work + ".err", "w") as se:
            rt = subprocess.Popen([RETOP, "-b", "-p", str(fx.pid), "-t", "main.Scale", "-t",
                                   "main.(*Acc).Add", "-t", "main.Twice", "-d", "0.2", "-o",
                                   "json"],
                                  stdout=so, stderr=se)
        if not wait_for(lambda: lines(snap) or rt.poll() is not None, 15) or not lines(snap):
            raise RuntimeError("retop did not attach: %s" % open(work + ".err").read()[:300])
        fx.send_signal(signal.SIGUSR1)
        if not wait_for(lambda: os.path.exists(out), 20):
            raise RuntimeError("no result from the program in 20 s")
        n = len(lines(snap))
        if not wait_for(lambda: len(lines(snap)) > n or rt.poll() is not None, 5):
            raise RuntimeError("retop wrote no snapshot after the program's result")
        rt.send_signal(signal.SIGINT)
        rt.wait(10)
        with open(out) as f:
            return json.loads(lines(snap)[-1]), json.load(f)
    finally:
        for p in (rt, fx):
            if p and p.poll() is None:
                p.kill()
                p.wait()


# main.Twice's marks are instructions of the call's line, no NOP of their
# own: counted all the same where the proof holds.
TRACED = ("main.Scale", "main.(*Acc).Add", "main.Twice")


def check_trace(binary):
    snap, fx = trace_run(binary, binary + ".trace")
    funcs = {f["name"]: f for f in snap.get("functions", [])}
    bad = []
    for name in TRACED:
        f, want = funcs.get(name), fx["per_func"][name]
        if f is None:
            bad.append("%s: not in the snapshot" % name)
            continue
        got = (f.get("inlined_calls"), f.get("inlined_calls_exact"), f.get("calls"))
        if got != (want["inlined_calls"], True, want["calls"]):
            bad.append("%s: traced %s inlined calls (exact %s) and %s out of line, the program "
                       "made %d and %d" % ((name,) + got + (want["inlined_calls"], want["calls"])))
        if f.get("inlined_sites_counted") != f.get("inlined_sites"):
            bad.append("%s: inlined calls counted at %s of %s sites: %s" % (
                name, f.get("inlined_sites_counted"), f.get("inlined_sites"),
                f.get("inlined_uncounted_why")))
    if not bad:
        print("%s traced: %s" % (binary, ", ".join("%s %d inlined calls at %d sites" % (
            n, funcs[n]["inlined_calls"], funcs[n]["inlined_sites_counted"])
            for n in TRACED)))
    return bad


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--releases", default="system")
    ap.add_argument("--modes", default="default,stripped,pie")
    a = ap.parse_args()
    ran, failed = 0, False
    for rel in a.releases.split(","):
        root, why = goroot(rel)
        if why:
            log("go%s: skipped: %s" % (rel, why))
            continue
        out_dir = os.path.join(a.out, "go" + rel)
        try:
            sites = oracle(root, out_dir)
            for mode in a.modes.split(","):
                binary = build(root, out_dir, mode)
                bad = check_cell(binary, sites)
                if os.geteuid() == 0:
                    bad += check_trace(binary)
                ran += 1
                for b in bad:
                    log("go%s %s: %s" % (rel, mode, b))
                failed |= bool(bad)
                if not bad:
                    print("go%s %s: %s" % (rel, mode, ", ".join(
                        "%s %d" % (n, c) for n, c in sorted(sites.items()))))
        except (RuntimeError, subprocess.TimeoutExpired) as e:
            log("go%s: %s" % (rel, e))
            failed = True
    if not ran and not failed:
        return 77
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
