#!/bin/sh
# retop's function index (retop -l -x BIN -o json) against debug/gosym and
# objdump, on every build of payments and the default build of each fixture.
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"
need_cmd objdump
need_cmd python3
need_retop

bins="payments-default payments-noopt payments-stripped payments-pie payments-cgo
      migrate-default recurse-default panics-default tightloop-default noret-default demo-default"
# shellcheck disable=SC2086 # $bins is a list
need_fixture gosym-oracle $bins

for b in $bins; do
    expect_exit 0 "$RETOP" -l -x "$FIXTURES/$b" -o json
    cp "$T/out" "$T/$b.json"
    "$ORACLE" check "$FIXTURES/$b" "$T/$b.json" >"$T/check" ||
        fail "$b: retop's index disagrees with debug/gosym/objdump: $(head -n 21 "$T/check")"
done

# Stripping removes .symtab and DWARF, not functions: same index either way.
"$ORACLE" compare "$T/payments-default.json" "$T/payments-stripped.json" >"$T/check" ||
    fail "default and stripped payments differ: $(head -n 21 "$T/check")"

# lookup LIST NAME: the one object named NAME, as Python sees it.
lookup() {
    python3 - "$1" "$2" <<'PY' || fail "$(basename "$1"): $2 not listed exactly once"
import json, sys
objs = [o for o in map(json.loads, filter(str.strip, open(sys.argv[1])))
        if o["name"] == sys.argv[2]]
if len(objs) != 1:
    sys.exit(1)
o = objs[0]
print(len(o["ret_sites"]), o["traceable"], o.get("reason") or "-")
PY
}

# ValidateCard has an error RET and a success RET.
# shellcheck disable=SC2046 # split "COUNT TRACEABLE REASON"
set -- $(lookup "$T/payments-default.json" main.ValidateCard)
[ "$1 $2" = "2 full" ] || fail "main.ValidateCard: $1 RET sites, traceable $2; expected 2, full"

# Forever has no RET at all: entry-only, and retop says why.
r=$(lookup "$T/noret-default.json" main.Forever)
case $r in
"0 entry-only no RET"*) ;;
*) fail "main.Forever: got '$r'; expected 0 RET sites, entry-only, reason 'no RET...'" ;;
esac

# The entry probe sits on the stack-check prologue's jump where the evidence
# allows, and RETOP_ENTRY_PROBE=first keeps every one on the first
# instruction; nothing else changes (docs/UPROBES.md).
expect_exit 0 env RETOP_ENTRY_PROBE=first "$RETOP" -l -x "$FIXTURES/payments-default" -o json
python3 - "$T/payments-default.json" "$T/out" <<'PY' || fail "RETOP_ENTRY_PROBE=first: $(cat "$T/err")"
import json, sys
load = lambda p: [json.loads(l) for l in open(p) if l.strip()]
moved, first = load(sys.argv[1]), load(sys.argv[2])
if not any(o["entry_probe"] for o in moved):
    sys.exit("no entry probe on a prologue's jump by default")
if any(o["entry_probe"] for o in first):
    sys.exit("an entry probe off the first instruction")
strip = lambda os: [{k: v for k, v in o.items() if k not in ("entry_probe", "counts_at_entry")} for o in os]
if strip(moved) != strip(first):
    sys.exit("the listings differ beyond entry_probe and counts_at_entry")
PY
exit 0
