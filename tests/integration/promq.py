#!/usr/bin/env python3
"""Helpers for serve-*.sh (stdlib only): HTTP fetches and Prometheus queries.

  freeport LO HI                  a TCP port of 127.0.0.1 in [LO, HI] nobody listens
                                  on, starting at a random one (tests run in parallel)
  get URL                         the body on stdout; exit 1 unless HTTP 200
  query PROM EXPR [TIME]          the value of EXPR's single result at TIME (Unix
                                  seconds, default now) through PROM's HTTP API;
                                  exit 1 unless there is exactly one result
  wait PROM EXPR SECONDS          until EXPR has a result whose value is non-zero
  lewidth PROM SELECTOR TIME V    width of the `le` bucket (prev le, le] of the
                                  histogram SELECTOR (a _bucket selector) holding V
"""
import json
import random
import socket
import sys
import time
import urllib.error
import urllib.parse
import urllib.request


def die(msg):
    print("promq: " + msg, file=sys.stderr)
    sys.exit(1)


def fetch(url, timeout=5):
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode(errors="replace")
    except (OSError, urllib.error.URLError) as e:
        return None, str(e)


def api(prom, expr, at=None):
    q = {"query": expr}
    if at is not None:
        q["time"] = "%.3f" % float(at)
    status, body = fetch("%s/api/v1/query?%s" % (prom, urllib.parse.urlencode(q)))
    if status != 200:
        return None, "HTTP %s: %s" % (status, body[:200])
    data = json.loads(body)
    if data.get("status") != "success":
        return None, body[:200]
    return data["data"]["result"], None


def cmd_freeport(args):
    lo, hi = int(args[0]), int(args[1])
    ports = list(range(lo, hi + 1))
    k = random.randrange(len(ports))
    for p in ports[k:] + ports[:k]:
        s = socket.socket()
        try:
            s.bind(("127.0.0.1", p))
        except OSError:
            continue
        finally:
            s.close()
        print(p)
        return
    die("no free port in %d-%d" % (lo, hi))


def cmd_get(args):
    status, body = fetch(args[0])
    if status != 200:
        die("GET %s: %s %s" % (args[0], status, body[:200]))
    sys.stdout.write(body)


def cmd_query(args):
    res, err = api(args[0], args[1], args[2] if len(args) > 2 else None)
    if err:
        die("query %s: %s" % (args[1], err))
    if len(res) != 1:
        die("query %s: %d results, expected 1: %s" % (args[1], len(res), json.dumps(res)[:300]))
    print(res[0]["value"][1])


def cmd_wait(args):
    deadline = time.time() + float(args[2])
    err = "no result"
    while time.time() < deadline:
        res, e = api(args[0], args[1])
        if e:
            err = e
        elif res and any(float(r["value"][1]) != 0 for r in res):
            return
        time.sleep(0.2)
    die("%s: nothing after %s s (%s)" % (args[1], args[2], err))


def cmd_lewidth(args):
    res, err = api(args[0], args[1], args[2])
    if err:
        die("query %s: %s" % (args[1], err))
    les = sorted(float(r["metric"]["le"]) for r in res)
    v, prev = float(args[3]), 0.0
    for le in les:
        if v <= le:
            print(repr(le - prev) if le != float("inf") else "inf")
            return
        prev = le
    die("%s: no le bucket holds %s" % (args[1], args[3]))


CMDS = {"freeport": (cmd_freeport, 2), "get": (cmd_get, 1), "query": (cmd_query, 2),
        "wait": (cmd_wait, 3), "lewidth": (cmd_lewidth, 4)}

if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] not in CMDS or len(sys.argv) - 2 < CMDS[sys.argv[1]][1]:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    CMDS[sys.argv[1]][0](sys.argv[2:])
