#!/usr/bin/env python3
"""esbuild-builds.py URL SRCFILE N OUT.json FUNC...

Asks an esbuild dev server (esbuild --serve) for N builds, one request at a
time.  Before each request SRCFILE, a module of the bundle, gets a new marker;
the answer must carry that marker, which proves that esbuild ran a new build
for that very request.  esbuild reuses a finished build for 250 ms (a page
load makes several requests), so requests are spaced by more than that.

OUT.json is the workload's own account, in the shape snapcheck.py reads:
{"calls": N, "per_func": {FUNC: {"calls": N}}, "rt_ns": [round trip of each
request, measured by this client]}.  Exit status 1 on any wrong answer.
"""
import json
import sys
import time
import urllib.request

GAP_S = 0.4  # > esbuild's 250 ms reuse of a recent build


def main():
    url, src, n, out, funcs = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5:]
    rts = []
    for i in range(1, n + 1):
        marker = "retop-build-%d" % i
        with open(src, "w") as f:
            f.write('export function greet(n) { return "%s " + n }\n' % marker)
        time.sleep(GAP_S)
        start = time.monotonic_ns()
        with urllib.request.urlopen(url, timeout=10) as r:
            body = r.read().decode("utf-8", "replace")
            status = r.status
        rts.append(time.monotonic_ns() - start)
        if status != 200 or marker not in body:
            sys.exit("esbuild-builds.py: request %d: status %d, marker %s %s in the bundle" %
                     (i, status, marker, "found" if marker in body else "missing"))
    with open(out, "w") as f:
        json.dump({"calls": n, "per_func": {fn: {"calls": n} for fn in funcs}, "rt_ns": rts}, f)


if __name__ == "__main__":
    main()
