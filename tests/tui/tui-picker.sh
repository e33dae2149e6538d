#!/bin/sh
# The process picker as a person uses it, in tmux: the PID column carries
# the sort arrow; `/` starts the filter, where q is text and not quit, a
# PID matches, Esc leaves and clears it; CPU% and MEM agree with the
# kernel's own accounting of a process spinning on a core; `s` moves the
# sort (and its arrow) to USER, then to CPU% busiest first.
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=tmux.sh
. "$(dirname "$0")/tmux.sh"
need_root
need_retop

start_fixture tightloop-default -loop
kill -USR1 "$FIXTURE_PID" # spins on one core from now on
spin=$FIXTURE_PID
hz=$(getconf CLK_TCK)

# ticks PID: utime + stime of PID, in clock ticks.
ticks() {
    sed 's/.*) //' "/proc/$1/stat" | awk '{ print $12 + $13 }'
}

tui_start 100 30
expect_screen "^ *$spin +[a-z]" 15 "picker lists PID $spin"
expect_screen '^ *(▲|\^)PID USER +CPU% +MEM +GO ' 5 "PID column sorted, with its arrow"

# The filter: `/`, then q is a letter of it.
keys /
type_text "q$spin"
expect_screen "^Go processes: 0 of [0-9]+ match 'q$spin'" 5 "q typed into the filter"
sleep 0.3
[ ! -e "$T/exit" ] || fail "q in the filter quit retop"
keys C-u
type_text "$spin"
expect_screen "match '$spin'" 5 "PID filter"
expect_screen "^ *$spin " 5 "PID filter keeps PID $spin"
# Every row left has our PID in its PID or its command line.
# shellcheck disable=SC2013 # one PID per line
for p in $(awk '/^ *[0-9]+ / { print $1 }' "$SCREEN"); do
    case $p in *"$spin"*) continue ;; esac
    tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | grep -q "$spin" || [ ! -e "/proc/$p" ] ||
        fail "filter '$spin' kept PID $p"
done
keys Escape
expect_screen '^Go processes: [0-9]+ \(rescanned' 5 "Esc leaves and clears the filter"

# CPU% against the kernel's ticks over the same seconds: the picker's
# value covers the 2 s between two scans, so sample around a fresh one.
t0=$(ticks "$spin")
s0=$(date +%s.%N)
sleep 4.5
t1=$(ticks "$spin")
s1=$(date +%s.%N)
snap
# shellcheck disable=SC2046 # the row's fields, split on purpose
set -- $(awk -v p="$spin" '$1 == p { print; exit }' "$SCREEN")
[ $# -ge 4 ] || fail "no row for PID $spin: $(cat "$SCREEN")"
cpu=$3
mem=$4
want=$(awk -v a="$t0" -v b="$t1" -v x="$s0" -v y="$s1" -v hz="$hz" \
    'BEGIN { printf "%.1f", 100 * (b - a) / hz / (y - x) }')
awk -v c="$cpu" -v w="$want" 'BEGIN { d = c - w; if (d < 0) d = -d; exit !(c ~ /^[0-9.]+$/ && d <= 25) }' ||
    fail "CPU% of the spinning PID $spin is '$cpu', the kernel says $want over the same seconds"
rss=$(awk '/^VmRSS:/ { print $2 * 1024 }' "/proc/$spin/status")
awk -v m="$mem" -v r="$rss" 'BEGIN {
    v = m; u = substr(v, length(v)); sub(/[KMGT]$/, "", v)
    k = u == "K" ? 1024 : u == "M" ? 1048576 : u == "G" ? 1073741824 : 1
    b = v * k; d = b - r; if (d < 0) d = -d; exit !(d <= r * 0.25 + 65536) }' ||
    fail "MEM of PID $spin is '$mem', VmRSS is $rss bytes"

# Sort: s moves to USER (ascending), s again to CPU% (busiest first).
keys s
expect_screen '^ *PID USER(▲|\^) ' 5 "sorted by USER, arrow moved"
keys s
expect_screen '^ *PID USER +(▼|v)CPU% ' 5 "sorted by CPU%, descending"
awk '/^ *[0-9]+ / { print $3 }' "$SCREEN" | sed 's/^-$/-1/' |
    awk 'NR > 1 && $1 > prev { bad = 1 } { prev = $1 } END { exit bad }' ||
    fail "rows not in descending CPU% order: $(cat "$SCREEN")"

quit_ok 20
echo "tui-picker: filter (q as text, PID, Esc), CPU% $cpu vs kernel $want, MEM $mem vs VmRSS $rss, sort arrows"
