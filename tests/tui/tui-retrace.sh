#!/bin/sh
# Untrace and trace again under a steady call rate, as a person does in the
# dashboard: 8 goroutines call main.Work (200 us) without pause, so calls are
# in flight at each detach and attach.  The entry probe comes out before the
# RET probes, the function's slot is reused, and no call of the first
# session may show up in the second: after the re-attach, main.Work has
# calls, 0 orphans, 0 unmatched returns, 0 dropped (at 160 columns every
# column is shown).  At the defaults: ~10,000 calls a second are over the
# budget, so calls may be estimated ('~' before them): the counts that must
# be 0 are exact all the same.
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=tmux.sh
. "$(dirname "$0")/tmux.sh"
need_root
need_retop
need_fixture stress-default

start_fixture stress-default -mode steady -loop -workers 8
kill -USR1 "$FIXTURE_PID"
tui_start 160 30 -p "$FIXTURE_PID" -d 0.3 -t main.Work
expect_screen '^FUNCTION .* ORPH .* UNMATCH +DROP' 15 "live table with every column at 160"
expect_screen '^main\.Work +~?[1-9]' 15 "main.Work traced"

# cell NAME: main.Work's value under the title NAME, as a number: by its
# place on the title line (a cell may hold a space: TIME's "cpu 97%"); the
# numbers are right-aligned under their titles.
cell() {
    num "$(python3 -c 'import re, sys
lines = open(sys.argv[1]).read().split("\n")
title = [l for l in lines if l.startswith("FUNCTION")][0]
row = [l for l in lines if l.split()[:1] == ["main.Work"]][0]
m = re.search(r"(?<!\S)\W?" + re.escape(sys.argv[2]) + r"(?!\S)", title)
print(row[:m.end()].split()[-1] if m else "")' "$SCREEN" "$1")"
}

for round in 1 2 3; do
    keys Tab
    expect_screen '^Functions: [0-9]+' 10 "round $round: browser"
    keys /
    type_text main.Work
    expect_screen '^\* main\.Work ' 5 "round $round: main.Work marked as traced"
    keys Enter
    keys Space
    expect_screen '^  main\.Work ' 30 "round $round: main.Work untraced"
    keys Space
    expect_screen '^\* main\.Work ' 30 "round $round: main.Work traced again"
    keys Tab
    expect_screen '^main\.Work +~?[0-9]' 10 "round $round: live row"
    # Calls counted again, for a few refreshes.
    n=100
    while :; do
        snap
        c=$(cell CALLS)
        awk -v c="$c" 'BEGIN { exit !(c >= 500) }' && break
        [ "$n" -gt 0 ] || { cat "$SCREEN" >&2; fail "round $round: calls stuck at $c"; }
        n=$((n - 1))
        sleep 0.1
    done
    for name in ORPH UNMATCH DROP; do
        grep -q "^FUNCTION .* $name" "$SCREEN" || { cat "$SCREEN" >&2; fail "no $name column"; }
        v=$(cell "$name")
        [ "$v" = 0 ] || { cat "$SCREEN" >&2; fail "round $round: $name of main.Work is $v after untrace + trace, expected 0"; }
    done
done
quit_ok 60
kill -0 "$FIXTURE_PID" || fail "the fixture died while traced"
echo "3 x untrace + trace of main.Work under 8 x 200 us calls: 0 orphans, 0 unmatched, 0 dropped after each"
