#!/bin/sh
# Failures of tracing: each one is one line on stderr with the documented exit
# status, and leaves no retop BPF program loaded behind.
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"
need_root
need_cmd python3
need_cmd bpftool
need_cmd setpriv
need_retop
need_fixture payments-default

start_fixture payments-default
fixture=$FIXTURE_PID

# retop_* programs loaded now (other retop sessions may run on this machine:
# only programs that appear during a failure and no process holds are ours).
sc progs >"$T/progs.before" || fail "cannot list BPF programs"

# no_leftover WHAT: no retop_* program that was not there before and that no
# process holds (freeing is asynchronous: poll up to 3 s).
no_leftover() {
    i=30
    while :; do
        sc progs >"$T/progs.now" || fail "cannot list BPF programs"
        left=$(awk 'NR == FNR { seen[$1] = 1; next } !($1 in seen) && $3 == "-"' \
            "$T/progs.before" "$T/progs.now")
        [ -n "$left" ] || return 0
        [ $i -gt 0 ] || fail "$1: retop exited and left BPF programs loaded: $(echo "$left" | tr '\n' ' ')"
        i=$((i - 1))
        sleep 0.1
    done
}

# check WHAT CODE REGEX CMD...: exit CODE, one stderr line matching REGEX
# (extended, case-insensitive), nothing left loaded.
n=0
check() {
    what=$1 code=$2 re=$3
    shift 3
    expect_exit "$code" "$@"
    lines=$(wc -l <"$T/err")
    [ "$lines" -eq 1 ] || fail "$what: $lines lines on stderr, expected 1: $(head -n 5 "$T/err" | tr '\n' '|')"
    grep -Eqi -e "$re" "$T/err" || fail "$what: stderr '$(cat "$T/err")' does not match /$re/"
    no_leftover "$what"
    n=$((n + 1))
}

check "pattern matching nothing" 1 'nearest' \
    "$RETOP" -b -p "$fixture" -t main.NoSuchFunction -n 1 -o json
check "too many functions" 1 'max-functions' \
    "$RETOP" -b -p "$fixture" -t 'main.*' --max-functions 2 -n 1 -o json
check "-b without -t" 2 '-t PATTERN' \
    "$RETOP" -b -p "$fixture" -n 1 -o json

# A PID that does not exist: the highest free one.
pid=$(($(cat /proc/sys/kernel/pid_max) - 1))
while [ -e "/proc/$pid" ]; do pid=$((pid - 1)); done
check "nonexistent PID $pid" 1 "$pid" \
    "$RETOP" -b -p "$pid" -t main.ProcessPayment -n 1 -o json

# Unprivileged (nobody): copies of retop and payments that nobody can run and
# read, wherever the build tree is.
{ chmod 711 "$T" && mkdir -m 755 "$T/pub" && cp "$RETOP" "$FIXTURES/payments-default" "$T/pub/" &&
    chmod 755 "$T/pub/retop" "$T/pub/payments-default"; } || fail "cannot make copies for nobody in $T"
nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
check "unprivileged, -x" 1 'root|CAP_BPF|permi' \
    nobody "$T/pub/retop" -b -x "$T/pub/payments-default" -t main.ProcessPayment -n 1 -o json
check "unprivileged, -p of a root process" 1 'root|CAP_BPF|permi' \
    nobody "$T/pub/retop" -b -p "$fixture" -t main.ProcessPayment -n 1 -o json

kill -0 "$fixture" || fail "the target died"
echo "tracing errors: $n failures, each one stderr line with the right status, no BPF program left"
