#!/bin/sh
# The default SDK address (127.0.0.1:9002) is shared by every process of a
# network namespace: retop -p PID asks it only when PID itself listens
# there.  An unrelated SDK on that port (here sdkapp's) is not used for
# another target (the payments fixture): no SDK line, the binary's own
# facts; for the SDK's own process the default still works.
# In its own network namespace, so that port 9002 is this test's alone.
if [ "$(id -u)" -eq 0 ] && [ -z "${RETOP_TEST_NETNS:-}" ] && command -v unshare >/dev/null 2>&1; then
    RETOP_TEST_NETNS=1 exec unshare -n sh -c 'ip link set lo up && exec sh "$0"' "$0"
fi
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"
need_root
need_retop
need_cmd python3
[ -n "${RETOP_TEST_NETNS:-}" ] || skip "unshare -n is needed for a private port 9002"

fn=main.ProcessPayment
source_of() {
    python3 -c 'import json, sys
fs = [json.loads(l) for l in open(sys.argv[1])]
print(" ".join(f["source"] for f in fs if f["name"] == sys.argv[2]))' "$1" "$fn"
}

start_fixture sdkapp-default -sdk 127.0.0.1:9002 -calls 1
sdkapp=$FIXTURE_PID
start_fixture payments-default -calls 1
target=$FIXTURE_PID

# Another process's SDK: not asked, said only with -v.
expect_exit 0 "$RETOP" -v -l -p "$target" -o json "$fn"
grep -q "PID $target does not listen on http://127.0.0.1:9002: no SDK" "$T/err" ||
    fail "no note that the SDK at the default address is not the target's: $(grep sdk "$T/err" | head -n 3)"
expect_exit 0 "$RETOP" -l -p "$target" -o json "$fn"
[ ! -s "$T/err" ] || fail "retop -l -p $target printed: $(head -n 3 "$T/err")"
src=$(source_of "$T/out")
[ -n "$src" ] && [ "$src" != sdk ] || fail "$fn of the payments fixture: source '$src', expected the binary's own"

# The SDK's own process: the default address is its.
expect_exit 0 "$RETOP" -l -p "$sdkapp" -o json "$fn"
src=$(source_of "$T/out")
[ "$src" = sdk ] || fail "$fn of sdkapp: source '$src', expected sdk (its SDK at the default address): $(head -n 3 "$T/err")"
echo "default SDK address: used for its owner (PID $sdkapp), not for PID $target"
