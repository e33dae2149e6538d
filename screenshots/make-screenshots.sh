#!/bin/sh
# Render PNGs of the real dashboard: retop runs in tmux on the demo service,
# tmux capture-pane -e keeps the colours, ansilove draws the PNG.  Run as root
# after scripts/build.  Needs tmux and ansilove (Debian packages).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
out=$top/screenshots
retop=$top/build/retop
demo=$top/build/tests/go/bin/demo-default
command -v ansilove >/dev/null || { echo "install ansilove (apt-get install ansilove)" >&2; exit 1; }
[ -x "$retop" ] && [ -x "$demo" ] || { echo "run scripts/build and make -C build tests/go/bin/.stamp first" >&2; exit 1; }

"$demo" >/dev/null 2>&1 &
pid=$!
trap 'tmux kill-session -t shots 2>/dev/null; tmux kill-session -t shots2 2>/dev/null; kill $pid 2>/dev/null' EXIT
sess=shots

# shot NAME: the pane as it is now, colours kept.  LC_ALL=C makes retop
# draw ASCII lines, which ansilove's fonts render faithfully.
shot() {
    # Reset attributes at each line's end: ansilove carries them over.
    tmux capture-pane -t "$sess" -e -p | sed 's/$/\x1b[0m/' >"$out/$1.ans"
    ansilove -q -c 101 -o "$out/$1.png" "$out/$1.ans" >/dev/null
    rm -f "$out/$1.ans"
    echo "  $out/$1.png"
}
keys() { tmux send-keys -t "$sess" "$@"; sleep 1.5; }

tmux new-session -d -s shots -x 100 -y 32 "LC_ALL=C TERM=xterm-256color $retop"
sleep 3
keys / demo-default
shot picker
keys Enter
sleep 2
keys / ValidateCard Enter
shot browser
# The live table and the detail view, on a second dashboard that traces the
# demo's exported functions from the start.
tmux new-session -d -s shots2 -x 100 -y 32 \
    "LC_ALL=C TERM=xterm-256color $retop -p $pid -t 'main.[A-Z]*'"
sess=shots2
sleep 8
shot live
keys j j j j j Enter
sleep 2
shot detail
keys q
sess=shots
keys q
