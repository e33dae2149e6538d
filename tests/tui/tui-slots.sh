#!/bin/sh
# A function that fails to attach stays listed, marked !, with its reason,
# and holds no tracing slot: with --max-functions 1, a function the
# interlock refuses (crypto/internal/boring/sig.StandardCrypto has bytes
# that do not decode as instructions) leaves the one slot to the next.
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=tmux.sh
. "$(dirname "$0")/tmux.sh"
need_root
need_retop

start_fixture sdkapp-default -sdk 127.0.0.1:0 -loop
kill -USR1 "$FIXTURE_PID"
tui_start 100 24 -p "$FIXTURE_PID" --max-functions 1
expect_screen '^Functions: [0-9]+' 20 "browser opens"

search_for sig.StandardCrypto 'crypto/internal/boring/sig\.StandardCrypto' 10
keys Space
expect_screen '^! crypto/internal/boring/sig\.StandardCrypto ' 15 "the refused function marked !"
expect_screen 'does not decode' 5 "the reason on the status line"

search_for main.CalculateTotal 'main\.CalculateTotal' 10
keys Space
expect_screen '^\* main\.CalculateTotal ' 15 "main.CalculateTotal traced in the one slot"
grep -q 'at most 1 functions' "$SCREEN" && fail "the refused function took the only slot"

quit_ok 60
echo "tui-slots: a refused function marked !, holding no slot; the next one traced with --max-functions 1"
