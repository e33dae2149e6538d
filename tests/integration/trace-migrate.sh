#!/bin/sh
# Goroutine migration: 1000 goroutines block inside main.Block (sleep, then a
# channel round-trip), so calls end on other threads than they began on.
# Pairing by {g, stack.hi - SP} must pair every return: calls equal the
# fixture's exactly, nothing in flight, nothing unmatched.
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"
need_root
need_cmd python3
need_retop
need_fixture migrate-default

trace_fixture migrate-default -calls 5000 -workers 1000 -- -t main.Block -d 0.2

sc exact "$SNAP" "$OUT" main.Block ||
    fail "migrate -calls 5000 -workers 1000 traced by retop -b -p PID -t main.Block: counts differ"
echo "migrate-default, 1000 workers: $(sc get "$SNAP" main.Block calls) of \
$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["calls"])' "$OUT") calls paired, \
in flight $(sc get "$SNAP" main.Block in_flight), unmatched $(sc get "$SNAP" main.Block unmatched_returns)"
