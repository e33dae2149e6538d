#!/bin/sh
# A whole package at the defaults, on a real server under real load: Debian's
# Prometheus ingests 40,000 series a second from a loopback target and
# answers a client's queries one after the other, while retop traces every
# function of its tsdb package (some 800, past the old limit of 256) and the
# closure that times each HTTP request it serves
# (promhttp.InstrumentHandlerDuration.func2), with nothing but -b -p -t.
# - every function traced, or refused with its reason;
# - every function with calls is exact or says it is not: its status says
#   sampled or timing where the budget took probes out, and an estimated
#   count carries its interval; the closure, whose truth is Prometheus's own
#   request count, is exact or holds it in its interval;
# - the figures hang together: p50 <= p99 <= max, calls >= timed calls;
# - the target is unharmed: every query answered while traced, still alive
#   and ingesting after retop's exit, and retop holds no probe;
# - memory: the BPF maps within 32 MiB and retop within 64 MiB resident
#   with the whole package traced.
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"
need_root
need_cmd python3
need_cmd prometheus
need_retop
pkg='github.com/prometheus/prometheus/tsdb.*'
fn=github.com/prometheus/client_golang/prometheus/promhttp.InstrumentHandlerDuration.func2

# shellcheck source-path=SCRIPTDIR source=../prom_load.sh
. "$(dirname "$0")/../prom_load.sh"
prom_start
prom_own "$T/warm"

# Untraced first: what the traced run's count is put beside (stated, not
# held to a threshold: the traps' cost is the budget's, 10,000 hits a
# second at the defaults).
prom_queries 4 "$T/queries0" || fail "a query failed before tracing: $(tail -n 2 "$T/queries0")"
retop_batch "$T/snap" -p "$prom" -t "$pkg" -t "$fn" -d 1
prom_own "$T/own0"
prom_queries 8 "$T/queries" || fail "a query failed while the package was traced: $(tail -n 2 "$T/queries")"
retop_snapshots 2
retop_stop "$prom"
prom_own "$T/own1"
# Unharmed: it answers and goes on ingesting (a scrape after retop's exit).
pq wait "$url" 'up{job="load"}' 10 >/dev/null || fail "Prometheus no longer scrapes after retop's exit"
running "$prom" || fail "Prometheus died while its tsdb package was traced"

python3 - "$T/snap" "$fn" "$(cat "$T/own0")" "$(cat "$T/own1")" "$(cat "$T/queries")" "$(cat "$T/queries0")" <<'PY' || fail "the package's figures are wrong or unmarked"
import json, sys
snaps = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
fn, own0, own1, queries = sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
untraced = int(sys.argv[6])
first, last = snaps[0], snaps[-1]
bad = []
fs = last["functions"]
states = {}
for f in fs:
    states[f["state"]] = states.get(f["state"], 0) + 1
traced = sum(1 for f in fs if f["state"] not in ("error", "detached"))
print("%d functions: %s" % (len(fs), ", ".join("%s %d" % kv for kv in sorted(states.items()))))
print("queries answered: %.2f/s untraced, %.2f/s with the package traced" % (untraced / 4.0, queries / 8.0))
# What the traps cost the target, snapshot by snapshot (the cost meter),
# against what the budget allows at the timed cost of a hit: stated, the
# governor's first seconds on a package are where it overspends.
cost = [s["probe_cost"]["cpu_ns_per_s"] / 1e6 for s in snaps if s.get("probe_cost")]
allowed = last["budget_hits_per_s"] * last["probe_hit_ns"] / 1e6
print("traps: %s ms/s of the target's CPU, snapshot by snapshot; the budget allows %.0f ms/s"
      % (" ".join("%.0f" % c for c in cost), allowed))
# The budget's own measure, stated the same way (tests/bench/harm-package.sh
# puts it against the budget): its first seconds on a package, and the
# estimated functions' sampled slices at a query's rate, overspend.
hits = [s["probe_cost"]["hits_per_s"] for s in snaps if s.get("probe_cost")]
print("probe hits: %s a second, snapshot by snapshot; the budget allows %.0f"
      % (" ".join("%.0f" % h for h in hits), last["budget_hits_per_s"]))
if any(s["probe_cost"]["hits"] < p["probe_cost"]["hits"] for p, s in zip(snaps, snaps[1:])):
    bad.append("probe_cost.hits went down from one snapshot to the next")
if len(fs) < 700 or traced < 600:
    bad.append("%d functions listed, %d traced: not the whole package" % (len(fs), traced))
for f in fs:
    if f["state"] in ("error", "detached") and len(f["status"].split(": ", 1)[-1]) < 8:
        bad.append("%s: %s, with no reason" % (f["name"], f["status"]))
busy = [f for f in fs if f["calls"] > 0]
marked = 0
for f in busy:
    st = f["status"]
    if f.get("estimated"):
        ci = f.get("calls_ci95") or [None, None]
        if ci[0] is None or ci[0] > f["calls"]:
            bad.append("%s: estimated %d calls, interval %s" % (f["name"], f["calls"], ci))
    if f["mode"] != "full" and "sampled" not in st:
        bad.append("%s: mode %s but its status %r does not say so" % (f["name"], f["mode"], st))
    if f.get("estimated") or f["mode"] != "full" or f.get("durations_sampled"):
        marked += 1
    if f["timed_calls"] > f["calls"] and not f.get("estimated"):
        bad.append("%s: %d timed calls of %d" % (f["name"], f["timed_calls"], f["calls"]))
    if f["timed_calls"] and not (f["p50_ns"] <= f["p99_ns"] <= f["max_ns"] * 1.02 + 1):
        bad.append("%s: p50 %d, p99 %d, max %d" % (f["name"], f["p50_ns"], f["p99_ns"], f["max_ns"]))
print("%d functions with calls, %d of them marked sampled, timing or estimated" % (len(busy), marked))
if len(busy) < 20:
    bad.append("only %d functions had calls: no load reached tsdb" % len(busy))
# The closure: Prometheus's own count of the requests it timed.
f = [x for x in fs if x["name"] == fn][0]
n = own1 - own0
lo, hi = (f["calls_ci95"] if f.get("estimated") else (f["calls"], f["calls"]))
print("%s: Prometheus timed %d requests; retop %d (%s), status %s"
      % (fn.rsplit("/", 1)[1], n, f["calls"], "estimated in [%s, %s]" % (lo, hi) if f.get("estimated") else "exact", f["status"]))
if not (lo <= n and (hi is None or n <= hi)):
    bad.append("the closure: %d requests, retop %d, interval [%s, %s]" % (n, f["calls"], lo, hi))
mem = last["memory"]
print("memory: BPF maps %.1f MiB, retop %.1f MiB resident" % (mem["bpf_map_bytes"] / 2**20, mem["user_bytes"] / 2**20))
if mem["bpf_map_bytes"] > 32 * 2**20:
    bad.append("BPF maps %d bytes: over 32 MiB" % mem["bpf_map_bytes"])
if mem["user_bytes"] > 64 * 2**20:
    bad.append("retop resident %d bytes: over 64 MiB" % mem["user_bytes"])
for b in bad[:20]:
    print("trace-package: " + b, file=sys.stderr)
sys.exit(1 if bad else 0)
PY
