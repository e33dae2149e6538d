#!/bin/sh
# The terminal, as operators meet it: a TERM this host has no terminfo for
# (a newer emulator over SSH) falls back with a note; TERM=dumb and an
# unset TERM are one clear line and exit 2; a terminal too small says so
# in what fits, and the dashboard comes back when it grows; NO_COLOR (set
# and not empty) leaves no colour on the screen, and the text still marks
# the cursor and the sort column.
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=tmux.sh
. "$(dirname "$0")/tmux.sh"
need_root
need_retop
need_cmd python3
need_cmd infocmp

start_fixture payments-default -loop
kill -USR1 "$FIXTURE_PID"

# quit_term WHAT: q ends retop with 0, and its tmux server goes.
quit_term() {
    quit_ok 60 "($1)"
    server_gone
}

# server_gone: the private tmux server ended, so the next session starts
# on a fresh one.
server_gone() {
    tm kill-server >/dev/null 2>&1
    n=50
    while tm list-sessions >/dev/null 2>&1; do
        [ "$n" -gt 0 ] || fail "the tmux server does not end"
        n=$((n - 1))
        sleep 0.1
    done
}

# colours FILE: how many colour SGR parameters the captured screen holds.
colours() {
    python3 - "$1" <<'PY'
import re, sys
n = 0
for m in re.finditer(r"\x1b\[([0-9;:]*)m", open(sys.argv[1], errors="replace").read()):
    for p in filter(None, re.split("[;:]", m.group(1))):
        v = int(p)
        n += 30 <= v <= 38 or 40 <= v <= 48 or 90 <= v <= 97 or 100 <= v <= 107
print(n)
PY
}

# 1. Unknown terminal types fall back to xterm-256color, with a note.
tried=0
for t in xterm-ghostty xterm-kitty alacritty; do
    infocmp "$t" >/dev/null 2>&1 && continue # this host knows it
    tried=$((tried + 1))
    TUI_ENV="TERM=$t" tui_start 80 24 -p "$FIXTURE_PID"
    expect_screen '^Functions: [0-9]+' 20 "browser under TERM=$t"
    expect_screen "^TERM '$t' is unknown here: using 'xterm-256color'" 5 \
        "fallback note for TERM=$t"
    quit_term "TERM=$t"
done
[ "$tried" -gt 0 ] || skip "this host has terminfo for every emulator tried"

# 2. No cursor addressing, or no TERM at all: one line, exit 2.
refuse() {
    rm -f "$T/exit" "$T/err"
    tm -f /dev/null new-session -d -s retop -x 80 -y 24 \
        "$1 $RETOP -p $FIXTURE_PID 2>$T/err; echo \$? >$T/exit.tmp; mv $T/exit.tmp $T/exit" ||
        fail "tmux new-session failed under '$1'"
    st=$(wait_exit 20) || fail "retop did not exit under '$1'"
    [ "$st" -eq 2 ] || fail "retop exited $st under '$1', expected 2: $(cat "$T/err")"
    [ "$(wc -l <"$T/err")" -eq 1 ] || fail "under '$1': want one line on stderr, got: $(cat "$T/err")"
    grep -q -- "$2" "$T/err" || fail "under '$1': '$(cat "$T/err")' lacks '$2'"
    server_gone
}
refuse "env TERM=dumb" "terminal 'dumb' cannot place the cursor: .*use -b"
refuse "env -u TERM" "TERM is not set"

# 3. Too small: a message that fits, then the dashboard when it grows.
tui_start 30 6 -p "$FIXTURE_PID"
expect_screen '^ *terminal too small$' 20 "too-small message at 30x6"
expect_screen '^ *this one is 30x6$' 5 "too-small size at 30x6"
grep -q 'retop needs 40x8' "$SCREEN" || fail "too-small message does not say what is needed"
tm resize-window -t retop -x 16 -y 3
expect_screen '^ *too small$' 5 "too-small message at 16x3"
expect_screen '^ *16x3<40x8$' 5 "too-small size at 16x3"
tm resize-window -t retop -x 80 -y 24
expect_screen '^Functions: [0-9]+' 5 "browser after growing to 80x24"
quit_term "too small"

# 4. NO_COLOR: no colour at all, the cursor row still in reverse video and
# the sort column still marked.  NO_COLOR set but empty keeps colours (the
# control: this check can fail).
nocolour() {
    TUI_ENV="$1" tui_start 100 24 -p "$FIXTURE_PID" -t main.ProcessPayment
    expect_screen '^FUNCTION .*(▼|v)P99 ' 20 "live table under '$1'"
    expect_screen '^main\.ProcessPayment +[0-9]' 20 "live row under '$1'"
    snap_escapes
    ncol=$(colours "$SCREEN.e")
    quit_term "$1"
}
nocolour "NO_COLOR=1"
# The cursor row and the titles: reverse video, an attribute, not a colour.
grep -q "$(printf '\033')\[[0-9;]*7m" "$SCREEN.e" || fail "NO_COLOR=1: no reverse video on screen"
[ "$ncol" -eq 0 ] || fail "NO_COLOR=1: $ncol colour escapes on screen: $(grep -o "$(printf '\033')\[[0-9;:]*m" "$SCREEN.e" | sort | uniq -c | tr -d "\033" | tr "\n" " ")"
nocolour "NO_COLOR="
[ "$ncol" -gt 0 ] || fail "NO_COLOR empty: no colour on screen (the check above proves nothing)"
echo "tui-term: $tried unknown TERMs fell back; dumb and unset refused; too-small fits; NO_COLOR honoured"
