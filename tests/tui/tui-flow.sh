#!/bin/sh
# The dashboard as a person uses it, in tmux: pick the payments fixture in
# the process picker, search its functions, trace two of them, watch the
# live table refresh, open the detail view, quit, and check that no probe
# is left.  Run at 80x24, then again with a resize to 120x40 on the live
# table, which must re-lay out.
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=tmux.sh
. "$(dirname "$0")/tmux.sh"
need_root
need_retop
need_cmd bpftool
need_cmd pgrep
# Not beside a time-split test: their nice -20 loaders on every CPU keep
# the payments fixture's calls waiting past this test's timeouts.
alone_among timesplit

start_fixture payments-default -loop
kill -USR1 "$FIXTURE_PID" # -loop still waits for the start signal

# Picker: the fixture is listed; typing part of its name keeps it; then its
# PID selects it for sure (a PID that contains ours is a larger number, so
# ours sorts first) and Enter opens its functions.
pick_fixture() {
    expect_screen "^ *$FIXTURE_PID +[a-z]" 15 "picker lists PID $FIXTURE_PID"
    keys /
    type_text payments
    expect_screen "match 'payments'" 5 "picker filter"
    grep -Eq "^ *$FIXTURE_PID " "$SCREEN" || fail "filter 'payments' hid PID $FIXTURE_PID"
    # Every row left runs a payments binary (the column may be cut short).
    # shellcheck disable=SC2013 # one PID per line
    for p in $(awk '/^ *[0-9]+ / { print $1 }' "$SCREEN"); do
        tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | grep -q payments ||
            [ ! -e "/proc/$p" ] || fail "filter 'payments' kept PID $p"
    done
    keys C-u
    type_text "$FIXTURE_PID"
    expect_screen "match '$FIXTURE_PID'" 5 "picker PID filter"
    keys Enter
    expect_screen '^Functions: [0-9]+' 20 "function browser opens"
}

# Browser: / narrows to the function, Enter keeps the filter, Space traces
# the first row (the exact name sorts before its closures).
trace_function() {
    keys /
    type_text "$1"
    expect_screen "^[ *+!] main\.$1 " 5 "search finds main.$1"
    keys Enter
    keys Space
    expect_screen "main\.$1: (attaching|tracing|entry-only)" 15 "progress of tracing main.$1"
    expect_screen "^\* main\.$1 " 15 "main.$1 marked as traced"
    expect_screen "main\.$1: tracing" 15 "main.$1 traced with its RETs"
}

# calls NAME: CALLS of NAME's live-table row, as a number.
calls() {
    # shellcheck disable=SC2046 # the row's fields, split on purpose
    set -- $(row "main.$1")
    num "${1:-0}"
}

# Live table: three refreshes with the call count rising; p50 near the
# fixture's 50 ms (20 ms own sleep + ValidateCard 20 + CalculateTotal 10).
check_live() {
    expect_screen '^main\.ProcessPayment +[0-9]' 10 "live table row"
    expect_screen '^main\.ValidateCard +[0-9]' 10 "live table row"
    prev=$(calls ProcessPayment)
    for i in 1 2 3; do
        n=50
        while :; do
            snap
            c=$(calls ProcessPayment)
            awk -v a="$c" -v b="$prev" 'BEGIN { exit !(a > b) }' && break
            [ "$n" -gt 0 ] || { cat "$SCREEN" >&2; fail "refresh $i: calls stuck at $c"; }
            n=$((n - 1))
            sleep 0.1
        done
        prev=$c
    done
    # shellcheck disable=SC2046 # the row's fields, split on purpose
    set -- $(row main.ProcessPayment)
    case $3 in
    *ms) ;;
    *) fail "p50 of ProcessPayment is '$3', expected milliseconds" ;;
    esac
    p50=$(num "$3")
    awk -v p="$p50" 'BEGIN { exit !(p >= 45 && p <= 55) }' ||
        fail "p50 of ProcessPayment is $3, expected 50ms +-10%"
}

# The live table at 80 columns has no OLDEST; at 120 it appears.
check_resize() {
    grep -q 'OLDEST' "$SCREEN" && fail "OLDEST column shown at 80 columns"
    tm resize-window -t retop -x 120 -y 40
    expect_screen 'FUNCTION .* OLDEST ' 5 "live table re-laid out at 120 columns"
    w=$(awk '/^FUNCTION/ { sub(/ +$/, ""); print length($0) }' "$SCREEN")
    [ "$w" -gt 80 ] || fail "title line is $w columns wide after the resize"
}

# Detail of ValidateCard: its two RETs (error and success path) both hit.
check_detail() {
    k=$(awk '/^FUNCTION/ { t = NR } /^main\.ValidateCard / { print NR - t - 1; exit }' "$SCREEN")
    [ -n "$k" ] || fail "no ValidateCard row"
    while [ "$k" -gt 0 ]; do
        keys j
        k=$((k - 1))
    done
    keys Enter
    expect_screen '^main\.ValidateCard +p50' 5 "detail view of main.ValidateCard"
    n=100
    while :; do
        snap
        hits=$(awk '$1 ~ /^[0-9]+$/ && $2 ~ /^\+0x/ && $3 ~ /:[0-9]+$/ { print $4 }' "$SCREEN")
        nsites=$(printf '%s\n' "$hits" | grep -c .)
        nz=$(printf '%s\n' "$hits" | grep -c '^[1-9]')
        [ "$nsites" -eq 2 ] && [ "$nz" -eq 2 ] && break
        [ "$n" -gt 0 ] || { cat "$SCREEN" >&2; fail "ValidateCard: want 2 RET sites with hits, got: $hits"; }
        n=$((n - 1))
        sleep 0.1
    done
    grep -q 'p50/p99 within' "$SCREEN" || fail "detail view does not state the error bound"
    # Where the entry probe sits: on the jump of the stack-check prologue.
    want=$("$RETOP" -l -x "$FIXTURES/payments-default" -o json main.ValidateCard |
        python3 -c 'import json, sys; print("+0x%x" % json.loads(sys.stdin.readline())["entry_probe"])')
    [ "$want" != "+0x0" ] || fail "retop -l: main.ValidateCard's entry probe on its first instruction"
    grep -q "entry probe $want\$" "$SCREEN" || grep -q "entry probe $want " "$SCREEN" ||
        fail "detail view does not say the entry probe is at $want: $(grep Status: "$SCREEN")"
    # Latency by caller: every call comes from the closure in ProcessPayment.
    expect_screen '^  main\.ProcessPayment\.func1 +[0-9.]+[kM]? +100\.0% ' 5 \
        "callers table with main.ProcessPayment.func1 making every call"
    # a: the arguments (and results) of the slowest calls from now on, under
    # each call; ValidateCard(card string) error: its card, and whether the
    # error it returned is nil (the bad card's is not).
    keys a
    expect_screen 'arguments captured with its slowest calls' 5 "the status line after a"
    n=100
    until grep -Eq '^ +card="4111(111111111111" -> r0=nil|-bad" -> r0=non-nil)$' "$SCREEN"; do
        [ "$n" -gt 0 ] || { cat "$SCREEN" >&2; fail "no call with its arguments under SLOWEST after a"; }
        n=$((n - 1))
        [ $((n % 4)) -eq 0 ] && keys j
        sleep 0.1
        snap
    done
    grep -E '^ +card=' "$SCREEN" | grep -Ev '"4111111111111111" -> r0=nil$|"4111-bad" -> r0=non-nil$' &&
        fail "a call with a card and an error that do not go together"
    # The instructions before each RET, decoded off the draw loop: at the
    # bottom of the page, both RETs marked.
    keys G
    expect_screen '^ +(◀|<) 0x[0-9a-f]+ \+0x[0-9a-f]+ +ret' 10 "disassembly with the RET marked"
    [ "$(grep -Ec '^ +(◀|<) 0x[0-9a-f]+ \+0x[0-9a-f]+ +ret' "$SCREEN")" -eq 2 ] ||
        fail "ValidateCard: want its 2 RETs marked in the disassembly: $(cat "$SCREEN")"
    # Back to the live table, where no page shows callers and none are
    # read, and in again: its callers are read again, every call of them.
    keys Escape
    expect_screen '^FUNCTION ' 5 "the live table after Esc"
    keys Enter
    expect_screen '^main\.ValidateCard +p50' 5 "detail view of main.ValidateCard again"
    expect_screen '^  main\.ProcessPayment\.func1 +[0-9.]+[kM]? +100\.0% ' 5 \
        "callers table again, with main.ProcessPayment.func1 making every call"
}

# q: retop detaches and exits 0, the pane ends, its BPF programs are gone.
check_quit() {
    rpid=$(tui_pid) || fail "cannot find retop's PID"
    progs=$(bpf_prog_ids "$rpid")
    [ -n "$progs" ] || fail "retop holds no BPF program while tracing"
    quit_ok 120
    n=50
    while tm has-session -t retop 2>/dev/null; do
        [ "$n" -gt 0 ] || fail "the tmux pane did not end"
        n=$((n - 1))
        sleep 0.1
    done
    # The kernel frees a program after its last link is gone, a little
    # after retop exits: allow it a few seconds.
    for id in $progs; do
        n=50
        while bpftool prog show id "$id" >/dev/null 2>&1; do
            [ "$n" -gt 0 ] || fail "BPF program $id outlived retop"
            n=$((n - 1))
            sleep 0.1
        done
    done
    # Other tests may run retop at the same time: a retop program is a
    # leak only when no process holds it.
    n=20
    while orphans=$(unowned_retop_progs) && [ -n "$orphans" ]; do
        [ "$n" -gt 0 ] || fail "retop_entry/retop_return loaded with no owner: $orphans"
        n=$((n - 1))
        sleep 0.1
    done
    return 0
}

flow() {
    tui_start 80 24 -d 0.5
    pick_fixture
    trace_function ProcessPayment
    trace_function ValidateCard
    keys Tab
    check_live
    [ "$1" = resize ] && check_resize
    check_detail
    check_quit
}

flow plain
flow resize
exit 0
