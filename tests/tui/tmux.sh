# shellcheck shell=sh
# Sourced by the TUI tests after ../lib.sh: drive retop in a private tmux
# server as a person would (send-keys), and read the screen (capture-pane).
# Every wait polls the screen with a timeout: no fixed sleeps.

need_cmd tmux
TMUX_SOCK="$T/tmux.sock"
SCREEN="$T/screen"
unset TMUX # a test run from inside tmux must still use its own server

tm() {
    tmux -S "$TMUX_SOCK" "$@"
}

trap 'tm kill-server >/dev/null 2>&1; cleanup_pids; rm -rf "$T"' EXIT

# tui_start COLS ROWS ARGS...: run "$RETOP ARGS" in a fresh session named
# retop; its exit status lands in $T/exit when it ends.  TUI_ENV holds
# extra VAR=VALUE words for its environment (TERM=..., NO_COLOR=1).
tui_start() {
    cols=$1
    rows=$2
    shift 2
    rm -f "$T/exit"
    printf '%s\n' "$RETOP $*" >"$T/cmd"
    # A UTF-8 locale when there is one: the line drawing is part of the test.
    loc=$(locale -a 2>/dev/null | grep -i -m1 -E '^(C|en_US)\.utf-?8$')
    # Through a script: a thousand -t words are past what tmux takes on
    # its command line.
    printf '%s\n' "env ${loc:+LC_ALL=$loc} ${TUI_ENV:-} $RETOP $*; echo \$? >$T/exit.tmp; mv $T/exit.tmp $T/exit" >"$T/tui.run"
    tm -f /dev/null new-session -d -s retop -x "$cols" -y "$rows" "exec sh $T/tui.run" ||
        fail "tmux new-session failed"
}

# htop_start COLS ROWS: htop refreshing every second (-d 10) in a session
# named htop of that size, as an operator leaves it running; its PID in
# HP, once it shows its screen.  The benchmarks put retop's cost beside it.
htop_start() {
    tm new-session -d -s htop -x "$1" -y "$2" "exec htop -d 10" || fail "cannot start htop in tmux"
    # shellcheck disable=SC2034 # HP is the caller's
    HP=$(tm display-message -p -t htop '#{pane_pid}') || fail "cannot find htop's PID"
    n=50
    until tm capture-pane -t htop -p | grep -q 'Load average'; do
        [ "$n" -gt 0 ] || fail "htop shows no screen"
        n=$((n - 1))
        sleep 0.1
    done
}

# The PID of retop itself (the pane runs a shell that runs it).
tui_pid() {
    pane=$(tm display-message -p -t retop '#{pane_pid}') || return 1
    pgrep -P "$pane" | head -n 1
}

snap() {
    tm capture-pane -t retop -p >"$SCREEN" 2>/dev/null
}

# snap_escapes: the screen with its attributes and colours as escapes.
snap_escapes() {
    tm capture-pane -t retop -p -e >"$SCREEN.e" 2>/dev/null
}

# wait_screen ERE [SECONDS]: until a line of the screen matches; 1 on timeout.
wait_screen() {
    n=$(( ${2:-10} * 10 ))
    while :; do
        snap
        grep -Eq -- "$1" "$SCREEN" && return 0
        [ "$n" -gt 0 ] || return 1
        n=$((n - 1))
        sleep 0.1
    done
}

# expect_screen ERE SECONDS WHAT: wait_screen or fail, showing the screen.
expect_screen() {
    wait_screen "$1" "$2" && return 0
    echo "--- screen (${3}) ---" >&2
    cat "$SCREEN" >&2
    fail "$3: no line matches '$1' after $2 s"
}

keys() {
    tm send-keys -t retop "$@"
}

# type_text TEXT: literal characters, as typed.
type_text() {
    tm send-keys -t retop -l "$1"
}

# num TEXT: "1.23k" -> 1230, "50.4ms" -> 50.4 (unit dropped), "-" -> 0.
num() {
    printf '%s\n' "$1" | awk '{
        v = $1; m = 1
        if (v ~ /k$/) m = 1e3; else if (v ~ /M$/) m = 1e6; else if (v ~ /G$/) m = 1e9
        gsub(/[^0-9.]/, "", v); if (v == "") v = 0
        printf "%.6g\n", v * m }'
}

# row NAME: the fields of the screen line that starts with NAME.
row() {
    awk -v n="$1" '$1 == n { $1 = ""; print; exit }' "$SCREEN"
}

# bpf_prog_ids PID: the BPF programs a process holds, from its fdinfo.
bpf_prog_ids() {
    for f in /proc/"$1"/fdinfo/*; do
        sed -n 's/^prog_id:[[:space:]]*//p' "$f" 2>/dev/null
    done | sort -u
}

# unowned_retop_progs: ids of retop_entry/retop_return programs that no
# process holds (by an fd of the program or of a link to it).
unowned_retop_progs() {
    owned=$(for p in /proc/[0-9]*; do bpf_prog_ids "${p#/proc/}"; done | sort -u)
    bpftool prog show | sed -n 's/^\([0-9]*\): .* name retop_\(entry\|return\) .*/\1/p' |
        while read -r id; do
            printf '%s\n' "$owned" | grep -qx "$id" || printf '%s ' "$id"
        done
}

# wait_exit SECONDS: until retop's exit status is known; prints it.
wait_exit() {
    wait_file "$T/exit" "$1" || return 1
    cat "$T/exit"
}

# quit_ok SECONDS [WHAT]: q, then retop exits 0 within SECONDS (WHAT is
# added to the failure).
quit_ok() {
    keys q
    st=$(wait_exit "$1") || fail "retop did not exit within $1 s of q${2:+ $2}"
    [ "$st" -eq 0 ] || fail "retop exited $st after q${2:+ $2}"
}

# search_for TEXT REGEX SECONDS: the browser's search for TEXT; its row
# (REGEX: the name as a regular expression) must show within SECONDS; Enter
# leaves the cursor on it.
search_for() {
    keys /
    type_text "$1"
    expect_screen "^[ *+!] $2 " "$3" "search finds $1"
    keys Enter
}
