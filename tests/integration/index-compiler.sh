#!/bin/sh
# retop's index of a big stripped Go binary (the Go compiler, ~14,000
# functions) against debug/gosym and objdump.
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"
bin=/usr/lib/go-1.19/pkg/tool/linux_amd64/compile
[ -f "$bin" ] || skip "$bin not found: install golang-1.19-go"
need_cmd objdump
need_retop
need_fixture gosym-oracle

expect_exit 0 "$RETOP" -l -x "$bin" -o json
cp "$T/out" "$T/compile.json"
"$ORACLE" check "$bin" "$T/compile.json" >"$T/check" ||
    fail "retop's index of $bin disagrees: $(head -n 21 "$T/check")"
exit 0
