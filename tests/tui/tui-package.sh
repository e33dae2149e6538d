#!/bin/sh
# The browser's package key as a person uses it, in tmux: the footer and
# the help list t; on the folded row of tests/go/manyfuncs' package main, t
# traces every function of it retop -l calls traceable, and t again asks
# before untracing them all (y: none traced).  With a limit the package
# passes (--max-functions 4), t says so first and asks: n traces nothing,
# y traces the first 4 by name, and t again says no slot is left.
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=tmux.sh
. "$(dirname "$0")/tmux.sh"
need_root
need_retop
need_cmd python3

start_fixture manyfuncs-default
kill -USR1 "$FIXTURE_PID"
# What t must trace: package main's functions with code that retop -l
# calls traceable (full or entry-only).
want=$("$RETOP" -l -p "$FIXTURE_PID" -o json 'main.*' | python3 -c '
import json, sys
print(sum(1 for l in sys.stdin if not json.loads(l)["inline_only"] and json.loads(l)["traceable"] != "no"))
') || fail "retop -l failed"
[ "$want" -gt 16 ] || fail "retop -l lists $want traceable functions in package main, expected the fixture's 16 and more"

# to_main: fold by package, then put the cursor on main's row (a search
# narrows to it, and clearing the search keeps the cursor there).
to_main() {
    keys f
    expect_screen '^Functions: [0-9]+, [0-9]+ packages' 5 "folded by package"
    keys /
    type_text main.Idle01
    keys Enter
    expect_screen '^ +(▸|▾|\+|-) main \(1 function\)' 5 "main's row found"
    keys /
    keys Escape
    expect_screen "^Functions: [0-9]+, [0-9]+ packages, 0 traced" 5 "search cleared"
}

tui_start 80 24 -p "$FIXTURE_PID"
expect_screen '^Functions: [0-9]+' 20 "browser opens"
expect_screen 'Space trace +t trace pkg ' 5 "t in the footer at 80 columns"
keys '?'
n=0
until wait_screen '^ +past --max-functions it asks first: y traces those that fit' 1; do
    [ "$n" -lt 30 ] || fail "the help does not say what t does past the limit: $(cat "$SCREEN")"
    n=$((n + 1))
    keys j # the help is longer than 24 lines
done
grep -q '^  t  *on a package row: trace every traceable function of it' "$SCREEN" ||
    fail "t not in the help: $(cat "$SCREEN")"
keys Escape
to_main
keys t
expect_screen "^Functions: .*, $want traced" 30 "t traced $want functions of main"
expect_screen "main: tracing $want of $want functions" 5 "the status line says so"
# The live table, in the order batch mode prints: P99, main.Slow first.
keys Tab
expect_screen '^FUNCTION .*(▼|v)P99 ' 10 "live table sorted by P99"
n=0
until [ "$(awk '/^FUNCTION/ { getline; print $1; exit }' "$SCREEN")" = main.Slow ]; do
    [ "$n" -lt 100 ] || fail "main.Slow is not the live table's first row: $(cat "$SCREEN")"
    n=$((n + 1))
    sleep 0.1
    snap
done
keys Tab
expect_screen '^Functions: ' 5 "back to the browser"
keys t
expect_screen "Untrace the package's $want traced functions\\? \\[y/N\\]" 5 "t again asks"
keys y
expect_screen '^Functions: .*, 0 traced' 30 "y untraced them"
quit_ok 60 "after untracing"

# --max-functions 4: a limit package main passes, the case under test.
tui_start 80 24 -p "$FIXTURE_PID" --max-functions 4
expect_screen '^Functions: [0-9]+' 20 "browser opens (--max-functions 4)"
to_main
keys t
expect_screen "$want functions, 4 slots left \\(--max-functions 4\\): trace the first 4\\? \\[y/N\\]" 15 "t asks past the limit"
keys n
expect_screen 'cancelled: nothing traced' 5 "n traces nothing"
grep -q ', 0 traced' "$SCREEN" || fail "n traced something: $(head -n 2 "$SCREEN")"
keys t
expect_screen "trace the first 4\\? \\[y/N\\]" 15 "t asks again"
keys y
expect_screen '^Functions: .*, 4 traced' 30 "y traced 4"
# The first 4 by name: unfold main and read the marks, on a screen tall
# enough for its rows.
tm resize-window -t retop -x 80 -y 60
keys Enter
for f in Fast Idle01 Idle02 Idle03; do
    expect_screen "^\\* +main\\.$f " 5 "main.$f traced"
done
grep -q '^\* *main\.Idle04 ' "$SCREEN" && fail "main.Idle04 traced past the limit"
# The cursor stayed on main's row.
keys t
expect_screen "main: $((want - 4)) functions to trace, no slot free of --max-functions 4" 5 "t with no slot left"
quit_ok 60 "with 4 traced"
echo "tui-package: t in footer and help; main's $want traceable functions traced, then untraced; --max-functions 4: asked, n none, y the first 4"
