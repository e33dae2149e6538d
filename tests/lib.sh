# Sourced by every integration test:  . "$(dirname "$0")/../lib.sh"
# make check exports abs_top_srcdir and abs_top_builddir; when a test is run
# by hand, both default to the source tree that holds this test.

: "${abs_top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${abs_top_builddir:=$abs_top_srcdir}"
RETOP=${RETOP:-$abs_top_builddir/retop}
FIXTURES=${FIXTURES:-$abs_top_builddir/tests/go/bin}
ORACLE=${ORACLE:-$FIXTURES/gosym-oracle}

# The Python helpers: snapshot checks (snapcheck.py) and HTTP/Prometheus
# queries (promq.py); each says what it does when run without arguments.
sc() { python3 "$abs_top_srcdir/tests/integration/snapcheck.py" "$@"; }
pq() { python3 "$abs_top_srcdir/tests/integration/promq.py" "$@"; }

# In CI a skipped test would hide a broken environment, so it fails there.
skip() {
    if [ -n "${CI+set}" ]; then
        echo "SKIP is a failure in CI: $*" >&2
        exit 1
    fi
    echo "SKIP: $*" >&2
    exit 77
}

fail() {
    echo "FAIL: $*" >&2
    exit 1
}

need_root() {
    [ "$(id -u)" -eq 0 ] || skip "needs root (or CAP_BPF+CAP_PERFMON)"
}

need_cmd() {
    command -v "$1" >/dev/null 2>&1 || skip "$1 not found"
}

# need_retop: the binary under test; a missing one is a build problem.
need_retop() {
    [ -x "$RETOP" ] || fail "$RETOP not found: run make first"
}

# need_fixture NAME-VARIANT...: build missing fixtures (or the oracle) on
# demand, so a test also runs on its own outside make check.
need_fixture() {
    for f in "$@"; do
        [ -x "$FIXTURES/$f" ] && continue
        command -v "${GO:-go}" >/dev/null 2>&1 || skip "go not found: install golang-go"
        case $f in gosym-oracle) name=$f ;; *) name=${f%-*} ;; esac
        "$abs_top_srcdir/tests/go/build-fixtures.sh" "$FIXTURES" "$name" >/dev/null ||
            fail "could not build fixture $f"
        [ -x "$FIXTURES/$f" ] || fail "no fixture $f after building"
    done
}

# expect_exit CODE CMD...: run CMD with stdout in $T/out and stderr in $T/err.
# A death by signal (exit >= 128) is reported as a crash whatever CODE is.
expect_exit() {
    want=$1
    shift
    if "$@" >"$T/out" 2>"$T/err"; then got=0; else got=$?; fi
    [ "$got" -lt 128 ] || fail "$* crashed (exit $got): $(head -n 3 "$T/err")"
    [ "$got" -eq "$want" ] || fail "$*: exit $got, expected $want: $(head -n 3 "$T/err")"
}

# wait_file FILE [SECONDS]: poll until FILE exists; 1 on timeout.
wait_file() {
    n=$(( ${2:-10} * 10 ))
    while [ ! -e "$1" ]; do
        [ "$n" -gt 0 ] || return 1
        n=$((n - 1))
        sleep 0.1
    done
}

# Background processes to end when the test ends: add with track_pid.
PIDS=""
track_pid() {
    PIDS="$PIDS $*"
}

# start_fixture NAME-VARIANT ARGS...: start a fixture that waits for SIGUSR1
# and wait until it is ready; its PID is in $FIXTURE_PID.
start_fixture() {
    f=$1
    shift
    need_fixture "$f"
    rm -f "$T/$f.ready"
    "$FIXTURES/$f" -ready "$T/$f.ready" "$@" &
    FIXTURE_PID=$!
    track_pid "$FIXTURE_PID"
    wait_file "$T/$f.ready" 10 || fail "$f did not become ready in 10 s"
}

# cleanup_pids: SIGTERM, then SIGKILL what is left after 2 s. `wait` (not
# kill -0, which sees zombies as alive) tells when our children are gone.
# shellcheck disable=SC2086 # $PIDS is a list
cleanup_pids() {
    [ -n "$PIDS" ] || return 0
    kill $PIDS 2>/dev/null
    ( sleep 2; kill -9 $PIDS ) >/dev/null 2>&1 &
    watchdog=$!
    wait $PIDS 2>/dev/null
    kill "$watchdog" 2>/dev/null
    PIDS=""
    return 0
}

# running PID: not exited (a child that exited is a zombie until waited for).
running() {
    [ -r "/proc/$1/stat" ] && ! sed 's/.*) //' "/proc/$1/stat" | grep -q '^[ZX]'
}

# term_exits_0 PID SECONDS WHAT: SIGTERM to PID (a child of the test), which
# must be gone within SECONDS and have exited 0; WHAT names it in failures,
# with the first lines of $T/serve.err.
term_exits_0() {
    kill -TERM "$1"
    n_=$(($2 * 10))
    while [ $n_ -gt 0 ] && running "$1"; do
        n_=$((n_ - 1))
        sleep 0.1
    done
    running "$1" && fail "$3 still runs $2 s after SIGTERM"
    if wait "$1"; then rc_=0; else rc_=$?; fi
    [ "$rc_" -eq 0 ] || fail "$3 exited $rc_ after SIGTERM: $(head -n 3 "$T/serve.err" 2>/dev/null)"
}

# start_serve LO HI ARGS...: retop --serve ARGS on a free port of
# 127.0.0.1:LO-HI, up once /healthz answers (before the probes are in); sets
# PORT and RP, stderr in $T/serve.err.  A port taken between the check and
# retop's bind (tests run in parallel) is retried.
start_serve() {
    lo_=$1 hi_=$2
    shift 2
    for try in 1 2 3 4 5; do
        PORT=$(pq freeport "$lo_" "$hi_") ||
            fail "no free port in 127.0.0.1:$lo_-$hi_"
        "$RETOP" --serve "127.0.0.1:$PORT" "$@" 2>"$T/serve.err" &
        RP=$!
        n=150
        while [ $n -gt 0 ] && running "$RP"; do
            if pq get \
                "http://127.0.0.1:$PORT/healthz" >/dev/null 2>&1; then
                track_pid "$RP"
                return 0
            fi
            n=$((n - 1))
            sleep 0.1
        done
        kill "$RP" 2>/dev/null
        wait "$RP"
        grep -q 'cannot listen' "$T/serve.err" ||
            fail "retop --serve did not come up in 15 s (try $try): $(head -n 3 "$T/serve.err")"
    done
    fail "retop --serve: no port could be bound in 5 tries"
}

# start_prometheus PORT: a real Prometheus on loopback scraping retop's
# --serve on 127.0.0.1:PORT every second; sets PROM to its base URL once it
# has scraped retop.  Its output is in $T/prom.err.  Not in a subshell: the
# server must be tracked for cleanup.
start_prometheus() {
    pport=$(pq freeport 19100 19199) || return 1
    cat >"$T/prom.yml" <<EOF
global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: retop
    static_configs:
      - targets: ['127.0.0.1:$1']
EOF
    prometheus --config.file="$T/prom.yml" --storage.tsdb.path="$T/tsdb" \
        --web.listen-address="127.0.0.1:$pport" --log.level=warn >"$T/prom.err" 2>&1 &
    track_pid $!
    PROM=http://127.0.0.1:$pport
    pq wait "$PROM" 'up{job="retop"}' 30 >/dev/null
}

T=$(mktemp -d "${TMPDIR:-/tmp}/retop-test.XXXXXX") || fail "mktemp failed"
trap 'cleanup_pids; rm -rf "$T"' EXIT
trap 'exit 1' HUP INT TERM
