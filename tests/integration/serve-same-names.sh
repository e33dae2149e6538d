#!/bin/sh
# Two traced functions with one name (Go's ABI wrapper and the function it
# wraps: internal/bytealg.countGenericString in the payments fixture) under
# --serve: each series carries an entry label, the listing's entry address,
# so no two series of /metrics share their labels (Prometheus rejects a whole
# scrape for that), and promtool accepts the page.
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"
need_root
need_cmd python3
need_cmd promtool
need_retop
need_fixture payments-default
name=internal/bytealg.countGenericString

"$RETOP" -l -x "$FIXTURES/payments-default" -o json "$name" >"$T/list" 2>"$T/list.err" ||
    fail "retop -l failed: $(head -n 3 "$T/list.err")"
want=$(python3 -c 'import json,sys
fs = [json.loads(l) for l in open(sys.argv[1]) if json.loads(l)["name"] == sys.argv[2]]
print(" ".join(sorted("0x%x" % f["entry"] for f in fs if f["traceable"] == "full")))' "$T/list" "$name")
[ "$(echo "$want" | wc -w)" -eq 2 ] || fail "expected two traceable copies of $name, the listing has: $want"

start_fixture payments-default -calls 10 -workers 1 -out "$T/result"
# A glob takes every copy (an exact name, the first).
start_serve 19200 19299 -p "$FIXTURE_PID" -t "${name%?}?" -d 0.3
n=100
until pq get "http://127.0.0.1:$PORT/metrics" >"$T/page" 2>/dev/null &&
    [ "$(grep -c "^retop_function_calls_total{function=\"$name\"" "$T/page")" -eq 2 ]; do
    [ $n -gt 0 ] || fail "no two series of $name on /metrics in 10 s: $(grep -m 3 "$name" "$T/page")"
    n=$((n - 1))
    sleep 0.1
done
promtool check metrics <"$T/page" >"$T/promtool" 2>&1 ||
    fail "promtool check metrics: $(head -n 5 "$T/promtool")"
python3 - "$T/page" "$name" "$want" <<'PY' || fail "same-named functions: duplicate or unlabelled series"
import re, sys
page, name, want = open(sys.argv[1]).read(), sys.argv[2], sorted(sys.argv[3].split())
seen, bad = set(), []
for line in page.splitlines():
    if not line or line.startswith("#"):
        continue
    series = line.rsplit(" ", 1)[0]
    if series in seen:
        bad.append("duplicate series: " + series)
    seen.add(series)
entries = sorted(re.findall(r'^retop_function_calls_total\{function="%s",entry="(0x[0-9a-f]+)"' % re.escape(name),
                            page, re.M))
if entries != want:
    bad.append("entry labels %s, the listing's entries %s" % (entries, want))
for b in bad[:5]:
    print(b)
sys.exit(1 if bad else 0)
PY
echo "$name: two series, entry=$(echo "$want" | tr ' ' ','), promtool accepts the page"
