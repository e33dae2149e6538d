#!/usr/bin/env python3
"""esbuild-builds.py URL SRCFILE N OUT.json [REQFUNC [BUILDFUNC...]]

Asks an esbuild dev server (esbuild --serve) for N builds, one request at a
time.  Before each build SRCFILE, a module of the bundle, gets a new marker
(<retop-build-I>; the test starts it at <retop-build-0>);
an answer that carries the marker proves that esbuild built it for that very
request.  esbuild answers from a finished build for 250 ms after it ends (a
page load makes several requests), so requests are spaced by more than that;
if a loaded machine still delays that timer, the answer carries the previous
marker and no build ran: the request is counted and made again.

OUT.json is the workload's own account, in the shape snapcheck.py reads:
{"calls": N, "requests": R, "per_func": {REQFUNC: {"calls": R},
BUILDFUNC: {"calls": N}...}, "rt_ns": [round trip of each request]}.  Exit status 1 on a wrong answer or a build not made in 5 requests.
"""
import json
import sys
import time
import urllib.request

GAP_S = 0.4  # > esbuild's 250 ms reuse of a recent build
# The server is on loopback: never through an http_proxy of the environment.
OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def main():
    url, src, n, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    req_func, build_funcs = sys.argv[5:6], sys.argv[6:]
    rts, requests = [], 0
    for i in range(1, n + 1):
        marker = "<retop-build-%d>" % i
        with open(src, "w") as f:
            f.write('export function greet(n) { return "%s " + n }\n' % marker)
        for attempt in range(5):
            time.sleep(GAP_S)
            start = time.monotonic_ns()
            with OPENER.open(url, timeout=10) as r:
                body = r.read().decode("utf-8", "replace")
                status = r.status
            rts.append(time.monotonic_ns() - start)
            requests += 1
            if status != 200:
                sys.exit("esbuild-builds.py: build %d: HTTP status %d" % (i, status))
            if marker in body:
                break
            if "<retop-build-%d>" % (i - 1) not in body:
                sys.exit("esbuild-builds.py: build %d: the bundle carries neither this build's "
                         "marker nor the previous one" % i)
        else:
            sys.exit("esbuild-builds.py: build %d: 5 requests, no new build" % i)
    per_func = {fn: {"calls": requests} for fn in req_func}
    per_func.update({fn: {"calls": n} for fn in build_funcs})
    with open(out, "w") as f:
        json.dump({"calls": n, "requests": requests, "per_func": per_func, "rt_ns": rts}, f)


if __name__ == "__main__":
    main()
