#!/usr/bin/env python3
"""Hostile HTTP clients against retop --serve (stdlib only; every loop is
bounded and the script ends by itself).

  siege PORT IDLE SLOW ADDRS SCRAPES
      Open IDLE connections that send nothing and SLOW ones that send a
      request line and then header bytes without ever ending the headers ("slowloris"), spread over ADDRS source addresses
      127.0.1.1, 127.0.1.2, ... (so that the per-address limit is not what
      refuses them).  Then GET /metrics SCRAPES times from 127.0.0.1, 0.2 s
      apart, each with a 2 s timeout, while the slow ones send one more
      byte before each scrape.
      Prints one JSON object:
        {"idle_held", "slow_held"}   still open when the scrapes began
        {"idle_after", "slow_after"} still open after the last scrape
        "ok"                         scrapes answered 200 with a metrics page
        "max_s"                      the slowest scrape, in seconds
  hog PORT CONNS SCRAPES
      Open CONNS idle connections from the single address 127.0.2.1, wait
      1 s, then scrape as above.  Prints {"held", "ok", "max_s"}: held is how
      many of the CONNS the server kept open.
  idle PORT SECONDS
      Open one connection from 127.0.3.1, send nothing, and print how many
      seconds passed until the server closed it (at most SECONDS; prints
      "open" if it was still open then).
  gzip URL
      GET URL three ways: with "Accept-Encoding: gzip", without it, and with
      "gzip;q=0".  Prints {"gzip", "plain", "q0_plain", "same_series",
      "ratio"}: the first answer was gzip (and says Vary), the other two
      were not, the decompressed page has the same series as the plain one,
      and how much smaller it was.
  watch URL SECONDS
      GET URL every 0.05 s for at most SECONDS; prints "polling" once the
      first attempt is made, then one line per distinct "retop_ready V"
      seen, with the wall-clock time (Unix seconds) it was first seen:
      "ready 0 1795434261.52"; stops once it has seen "retop_ready 1".
"""
import gzip
import json
import socket
import sys
import time
import urllib.request

REQ_HEAD = b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: slowloris\r\n"


def die(msg):
    print("hostile_http: " + msg, file=sys.stderr)
    sys.exit(1)


def connect(port, src):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind((src, 0))
    s.settimeout(2)
    s.connect(("127.0.0.1", port))
    s.setblocking(False)
    return s


def is_open(s):
    """True while the server has neither closed nor reset the connection."""
    try:
        return s.recv(1, socket.MSG_PEEK) != b""
    except BlockingIOError:
        return True
    except OSError:
        return False


def trickle(slow):
    for s in slow:
        try:
            s.send(b"x")  # a header name that never ends
        except OSError:
            pass


def scrape(port):
    t0 = time.monotonic()
    try:
        with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port, timeout=2) as r:
            body = r.read().decode()
            ok = r.status == 200 and "retop_build_info" in body
    except OSError:
        ok = False
    return ok, time.monotonic() - t0


def scrapes(port, n, slow):
    ok, worst = 0, 0.0
    for i in range(n):
        trickle(slow)
        good, took = scrape(port)
        ok += good
        worst = max(worst, took)
        time.sleep(0.2)
    return ok, worst


def cmd_siege(args):
    port, nidle, nslow, naddr, nscrape = map(int, args)
    addrs = ["127.0.1.%d" % (1 + k) for k in range(naddr)]
    idle = [connect(port, addrs[i % naddr]) for i in range(nidle)]
    slow = []
    for i in range(nslow):
        s = connect(port, addrs[(nidle + i) % naddr])
        s.send(REQ_HEAD)
        slow.append(s)
    time.sleep(0.5)
    out = {"idle_held": sum(map(is_open, idle)), "slow_held": sum(map(is_open, slow))}
    out["ok"], out["max_s"] = scrapes(port, nscrape, slow)
    out["idle_after"] = sum(map(is_open, idle))
    out["slow_after"] = sum(map(is_open, slow))
    out["max_s"] = round(out["max_s"], 3)
    print(json.dumps(out))
    for s in idle + slow:
        s.close()


def cmd_hog(args):
    port, nconn, nscrape = map(int, args)
    conns = []
    for _ in range(nconn):
        try:
            conns.append(connect(port, "127.0.2.1"))
        except OSError:
            pass  # refused or timed out at connect: not held either
    time.sleep(1)
    out = {"held": sum(map(is_open, conns))}
    out["ok"], worst = scrapes(port, nscrape, [])
    out["max_s"] = round(worst, 3)
    print(json.dumps(out))
    for s in conns:
        s.close()


def cmd_idle(args):
    port, secs = int(args[0]), float(args[1])
    s = connect(port, "127.0.3.1")
    s.setblocking(True)
    s.settimeout(secs)
    t0 = time.monotonic()
    try:
        s.recv(1)
        print("%.1f" % (time.monotonic() - t0))
    except socket.timeout:
        print("open")
    except OSError:
        print("%.1f" % (time.monotonic() - t0))
    s.close()


def get_raw(url, accept):
    req = urllib.request.Request(url)
    if accept is not None:
        req.add_header("Accept-Encoding", accept)
    with urllib.request.urlopen(req, timeout=5) as r:
        return r.headers, r.read()


def series(text):
    return sorted(l.rsplit(" ", 1)[0] for l in text.splitlines() if l and l[0] != "#")


def cmd_gzip(args):
    url = args[0]
    hz, bz = get_raw(url, "gzip")
    hp, bp = get_raw(url, None)
    hq, _ = get_raw(url, "gzip;q=0")
    out = {
        "gzip": hz.get("Content-Encoding") == "gzip" and hz.get("Vary") == "Accept-Encoding",
        "plain": hp.get("Content-Encoding") is None,
        "q0_plain": hq.get("Content-Encoding") is None,
    }
    text = gzip.decompress(bz).decode() if out["gzip"] else bz.decode()
    out["same_series"] = series(text) == series(bp.decode())
    out["ratio"] = round(len(bp) / max(1, len(bz)), 1)
    print(json.dumps(out))


def cmd_watch(args):
    url, secs = args[0], float(args[1])
    t0 = time.monotonic()
    seen = None
    first = True
    while time.monotonic() - t0 < secs:
        try:
            with urllib.request.urlopen(url, timeout=1) as r:
                for line in r.read().decode().splitlines():
                    if line.startswith("retop_ready ") and line != seen:
                        seen = line
                        print("ready %s %.3f" % (line.split()[1], time.time()), flush=True)
        except OSError:
            pass
        if first:
            print("polling", flush=True)
            first = False
        if seen == "retop_ready 1":
            return
        time.sleep(0.05)


CMDS = {"siege": (cmd_siege, 5), "hog": (cmd_hog, 3), "idle": (cmd_idle, 2), "gzip": (cmd_gzip, 1), "watch": (cmd_watch, 2)}

if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] not in CMDS or len(sys.argv) - 2 != CMDS[sys.argv[1]][1]:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    CMDS[sys.argv[1]][0](sys.argv[2:])
