#!/usr/bin/env python3
"""timecmd.py [--term] -- CMD...: run CMD, time it, print one JSON line.

first_line_s: wall time from the start to CMD's first line on stdout (for
retop -b: its first snapshot; for noop_probe: "ready", every probe attached).
exit_s: wall time from that first line to CMD's exit. With --term, CMD is
sent SIGTERM as soon as its first line arrives (noop_probe holds its probes
until then), so exit_s is the time it takes to let go of them.
total_s: wall time from the start to CMD's exit.
cpu_s: CPU time (user + sys) of CMD and what it waited for.
Also: rc, lines (stdout lines), stdout_tail (the last line) and stderr (its end).
"""
import json
import resource
import signal
import subprocess
import sys
import time


def main():
    args = sys.argv[1:]
    term = False
    if args and args[0] == "--term":
        term, args = True, args[1:]
    if args and args[0] == "--":
        args = args[1:]
    if not args:
        sys.exit(__doc__)
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    first = p.stdout.readline()
    t1 = time.monotonic()
    if term and first:
        p.send_signal(signal.SIGTERM)
    rest = p.stdout.read()
    err = p.stderr.read()
    rc = p.wait()
    t2 = time.monotonic()
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = (first + rest).splitlines()
    print(json.dumps({
        "first_line_s": t1 - t0 if first else None,
        "exit_s": t2 - t1,
        "total_s": t2 - t0,
        "cpu_s": r1.ru_utime + r1.ru_stime - r0.ru_utime - r0.ru_stime,
        "rc": rc,
        "lines": len(out),
        "stdout_tail": out[-1] if out else "",
        "stderr": err[-500:],
    }))


if __name__ == "__main__":
    main()
