#!/bin/sh
# The function browser as a person uses it, in tmux: at 60 columns the
# NAME column keeps whole names (the other columns give way); Space
# traces, and the status line counts its probes (the entry, each RET); Esc and
# Backspace while a function is traced ask before detaching (n keeps
# tracing, y detaches and shows the processes); `f` folds by the real
# package path, the same packages Go's debug/gosym names.
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=tmux.sh
. "$(dirname "$0")/tmux.sh"
need_root
need_retop
need_cmd bpftool
need_cmd pgrep
need_fixture gosym-oracle

start_fixture payments-default -loop
kill -USR1 "$FIXTURE_PID"

tui_start 60 24 -p "$FIXTURE_PID"
expect_screen '^Functions: [0-9]+' 20 "browser opens"
rpid=$(tui_pid) || fail "cannot find retop's PID"

# Narrow: the whole name, SOURCE left out before the name is cut.
keys /
type_text ProcessPayment
keys Enter
expect_screen '^[ *+!] main\.ProcessPayment ' 5 "whole name at 60 columns"
grep -q 'SOURCE' "$SCREEN" && fail "SOURCE shown at 60 columns while names are cut"
keys Space
expect_screen '^\* main\.ProcessPayment ' 15 "main.ProcessPayment traced"
[ -n "$(bpf_prog_ids "$rpid")" ] || fail "retop holds no BPF program while tracing"
# The status line counts its probes: the entry and each RET site.
"$RETOP" -l -x "$FIXTURES/payments-default" -o json main.ProcessPayment >"$T/pp.json" ||
    fail "retop -l main.ProcessPayment failed"
np=$(python3 -c 'import json, sys
print(1 + len(json.loads(open(sys.argv[1]).readline())["ret_sites"]))' "$T/pp.json")
expect_screen "main\.ProcessPayment: tracing, $np probes" 5 "the status line counts $np probes"

# Esc asks; n keeps everything.
keys Escape
expect_screen 'Detach 1 traced function, back to processes\? \[y/N\]' 5 "Esc asks"
keys n
expect_screen 'cancelled: still tracing' 5 "n cancels"
expect_screen '^\* main\.ProcessPayment ' 5 "still traced after n"
[ -n "$(bpf_prog_ids "$rpid")" ] || fail "the probes went after n"

# Backspace asks too; y detaches and shows the processes.
keys BSpace
expect_screen 'Detach 1 traced function' 5 "Backspace asks"
keys y
expect_screen '^Go processes: ' 10 "y goes to the picker"
n=50
while [ -n "$(bpf_prog_ids "$rpid")" ]; do
    [ "$n" -gt 0 ] || fail "retop still holds BPF programs after y"
    n=$((n - 1))
    sleep 0.1
done

# Back to the same process, on a screen tall enough for every package.
tm resize-window -t retop -x 100 -y 70
keys /
type_text "$FIXTURE_PID"
expect_screen "^ *$FIXTURE_PID " 15 "picker lists PID $FIXTURE_PID"
keys Enter
expect_screen '^Functions: [0-9]+' 20 "browser opens again"
keys f
expect_screen '^Functions: [0-9]+, [0-9]+ packages' 5 "folded"
# tmux may capture a frame half drawn (a row's new text, not yet its cleared
# end): read the screen again until the rows are all there, for 5 s.
n=50
while :; do
    npkg=$(sed -n 's/^Functions: [0-9]*, \([0-9]*\) packages.*/\1/p' "$SCREEN")
    sed -n 's/^ *\(▸\|▾\|+\|-\) \(.*\) ([0-9]* functions\{0,1\})$/\2/p' "$SCREEN" | sort >"$T/shown"
    [ "$(wc -l <"$T/shown")" -eq "${npkg:-0}" ] && break
    [ "$n" -gt 0 ] || fail "header says $npkg packages, $(wc -l <"$T/shown") rows on screen: $(cat "$SCREEN")"
    n=$((n - 1))
    sleep 0.1
    snap
done
# Go's reading, less what it leaves unnamed ("" for assembly and the
# compiler's own type.. functions, which the browser groups by name).
"$FIXTURES/gosym-oracle" packages "$FIXTURES/payments-default" | grep -v '^$' | sort >"$T/want"
grep -v -x -e '(no package)' -e type -e go "$T/shown" >"$T/shown.go"
diff "$T/want" "$T/shown.go" >"$T/diff" ||
    fail "folded packages differ from debug/gosym's (< gosym, > retop): $(cat "$T/diff")"
grep -q '\.(\*\|\.func[0-9]' "$T/shown" && fail "a receiver or a closure folded as a package"

quit_ok 60
echo "tui-browser: whole names at 60 columns; Esc/Backspace ask, n keeps, y detaches; $npkg packages as debug/gosym"
