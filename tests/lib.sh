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

# alone_among NAME: from here to its end, this test runs while no other
# test that said the same NAME does (make check runs two at once).  The
# time-split tests run their fixture first among the machine's work (a
# nice -20 scheduling group) with processes that load every CPU: one's
# loaders would keep the other's calls waiting for a CPU at the same
# priority, which its own clock counts only for the calls that stayed on
# one thread.  tui-flow takes the same lock: beside those loaders the
# first captured call of its `a` key missed its 10 s, three runs of three;
# so does batch-top, whose P99 order of two sleeps they can swap.
alone_among() {
    exec 9>"${TMPDIR:-/tmp}/retop-tests-$1.lock"
    flock 9 || fail "cannot lock ${TMPDIR:-/tmp}/retop-tests-$1.lock"
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
    st_=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
    ! printf '%s\n' "$st_" | sed 's/.*) //' | grep -q '^[ZX]'
}

# gone_within PID SECONDS: poll until PID has exited; 1 if it still runs.
gone_within() {
    n_=$(($2 * 10))
    while running "$1"; do
        [ $n_ -gt 0 ] || return 1
        n_=$((n_ - 1))
        sleep 0.1
    done
}

# term_exits_0 PID SECONDS WHAT: SIGTERM to PID (a child of the test), which
# must be gone within SECONDS and have exited 0; WHAT names it in failures,
# with the first lines of $T/serve.err.
term_exits_0() {
    kill -TERM "$1"
    gone_within "$1" "$2" || fail "$3 still runs $2 s after SIGTERM"
    if wait "$1"; then rc_=0; else rc_=$?; fi
    [ "$rc_" -eq 0 ] || fail "$3 exited $rc_ after SIGTERM: $(head -n 3 "$T/serve.err" 2>/dev/null)"
}

# A traced run, in steps: retop_batch starts retop -b and returns once it
# traces; fixture_go has the fixture do its work; retop_snapshots waits for
# snapshots taken after it; retop_stop ends retop with SIGINT.  trace_fixture
# chains them for one fixture.  Their timeouts, in seconds:
RETOP_ATTACH_S=20   # the first snapshot: indexed, every probe in (esbuild's index takes the longest)
FIXTURE_RESULT_S=60 # a fixture's result once signalled (trace-stress holds 100,100 calls)
SNAPSHOTS_S=5       # the next snapshots (-d 0.2 to 1 s)
RETOP_EXIT_S=10     # retop's exit after SIGINT: its probes out

# retop_batch SNAP ARGS...: retop -b ARGS -o json in the background, its
# snapshots in SNAP and its stderr in SNAP.err ($RETOP_ERR); returns once
# the first snapshot is out (every probe in).  Its PID is in $RETOP_PID;
# failures name the command and SNAP, with the first lines of its stderr.
retop_batch() {
    RETOP_SNAP=$1 RETOP_ERR=$1.err
    shift
    RETOP_CMD="retop -b $* -o json >${RETOP_SNAP#"$T"/}"
    "$RETOP" -b "$@" -o json >"$RETOP_SNAP" 2>"$RETOP_ERR" &
    RETOP_PID=$!
    track_pid "$RETOP_PID"
    if ! sc wait "$RETOP_SNAP" 1 "$RETOP_ATTACH_S" "$RETOP_PID"; then
        retop_running_ "before its first snapshot"
        fail "$RETOP_CMD: no snapshot in $RETOP_ATTACH_S s (not attached): $(retop_err)"
    fi
}

# retop_err: the first lines of retop's stderr, for a failure.
retop_err() {
    if [ -s "$RETOP_ERR" ]; then head -n 3 "$RETOP_ERR"; else echo "nothing on stderr"; fi
}

# retop_running_ WHEN: a failure with retop's exit status if it has exited.
retop_running_() {
    running "$RETOP_PID" && return 0
    if wait "$RETOP_PID"; then rc_=0; else rc_=$?; fi
    fail "$RETOP_CMD: exited $rc_ $1: $(retop_err)"
}

# retop_snapshots N: until retop has printed N more snapshots than it has
# now; the last one then holds everything that happened before the call.
retop_snapshots() {
    if ! sc wait "$RETOP_SNAP" $(($(sc lines "$RETOP_SNAP") + $1)) "$SNAPSHOTS_S" "$RETOP_PID"; then
        retop_running_ "before $1 new snapshots"
        fail "$RETOP_CMD: fewer than $1 new snapshots in $SNAPSHOTS_S s: $(retop_err)"
    fi
}

# text_started TEXT PID: until retop -b (text, PID) printed its first
# snapshot to TEXT: its probes are in, the program may start (with the time
# split retop takes over a second to attach on a loaded machine).
text_started() {
    n_=150
    until grep -q '^FUNCTION ' "$1"; do
        [ $n_ -gt 0 ] && running "$2" || fail "retop -b (text): no first snapshot after 15 s: $(head -n 3 "$1.err" 2>/dev/null)"
        n_=$((n_ - 1))
        sleep 0.1
    done
}

# text_stop TEXT PID: until retop -b (text, PID) printed one snapshot more
# than it has now (the work done before it is in it), then SIGINT; it must
# exit 0.
text_stop() {
    k_=$(grep -c '^FUNCTION ' "$1")
    n_=100
    until [ "$(grep -c '^FUNCTION ' "$1")" -gt "$k_" ]; do
        [ $n_ -gt 0 ] && running "$2" || fail "retop -b (text): no snapshot after the work in 10 s"
        n_=$((n_ - 1))
        sleep 0.1
    done
    kill -INT "$2"
    wait "$2" || fail "retop -b (text) failed: $(head -n 3 "$1.err" 2>/dev/null)"
}

# fixture_result OUT: until the fixture's result is in OUT.
fixture_result() {
    wait_file "$1" "$FIXTURE_RESULT_S" ||
        fail "no result from the fixture in ${1#"$T"/} after $FIXTURE_RESULT_S s (did it crash?)"
}

# fixture_go OUT [PID]: SIGUSR1 to the fixture PID (the last one started by
# start_fixture if none), which then does its work, and wait for its result
# in OUT.
fixture_go() {
    kill -USR1 "${2:-$FIXTURE_PID}"
    fixture_result "$1"
}

# retop_stop [PID]: SIGINT to retop, which must exit 0 within RETOP_EXIT_S;
# then the traced fixture PID, if given, must still run.
retop_stop() {
    kill -INT "$RETOP_PID" 2>/dev/null
    gone_within "$RETOP_PID" "$RETOP_EXIT_S" || fail "$RETOP_CMD: still runs $RETOP_EXIT_S s after SIGINT"
    if wait "$RETOP_PID"; then rc_=0; else rc_=$?; fi
    [ "$rc_" -eq 0 ] || fail "$RETOP_CMD: exited $rc_ after SIGINT: $(retop_err)"
    [ -z "${1-}" ] || running "$1" || fail "the fixture (PID $1) died while traced by $RETOP_CMD"
}

# trace_fixture NAME ARGS... -- RETOP-ARGS...: the fixture NAME (waiting for
# SIGUSR1) traced by retop -b -p PID RETOP-ARGS while it does its work, with
# its result in $OUT ($T/NAME.out) and retop's snapshots in $SNAP
# ($T/NAME.snap), the last one taken after the work; retop exited 0 after
# SIGINT and the fixture still runs ($FIXTURE_PID).  IDLE_SNAPSHOTS: that
# many snapshots more before the work, every function never called in them.
trace_fixture() {
    SNAP=$T/$1.snap OUT=$T/$1.out
    rm -f "$OUT"
    trace_fixture_start_ "$@"
    while [ "$1" != -- ]; do shift; done
    shift
    retop_batch "$SNAP" -p "$FIXTURE_PID" "$@"
    [ "${IDLE_SNAPSHOTS:-0}" -eq 0 ] || retop_snapshots "$IDLE_SNAPSHOTS"
    fixture_go "$OUT"
    retop_snapshots 1
    retop_stop "$FIXTURE_PID"
}

# trace_fixture_start_ NAME ARGS... -- ...: start_fixture NAME ARGS -out $OUT.
# Its arguments before -- are rotated to the end, and the rest shifted away.
trace_fixture_start_() {
    name_=$1 k_=0
    shift
    for a_ in "$@"; do
        [ "$a_" = -- ] && break
        k_=$((k_ + 1))
    done
    [ $k_ -lt $# ] || fail "trace_fixture $name_: no -- before retop's arguments"
    i_=0
    while [ $i_ -lt $k_ ]; do
        a_=$1
        shift
        set -- "$@" "$a_"
        i_=$((i_ + 1))
    done
    shift $(($# - k_))
    start_fixture "$name_" "$@" -out "$OUT"
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

# serve_ready: until the --serve started by start_serve says its probes
# are in (/metrics retop_ready 1; 15 s at most).  /healthz, which
# start_serve waits for, answers while it still attaches: calls made before
# go by uncounted, series of the targets are not yet on the page.
serve_ready() {
    n_=150
    until pq get "http://127.0.0.1:$PORT/metrics" 2>/dev/null | grep -q '^retop_ready 1$'; do
        [ $n_ -gt 0 ] || fail "retop --serve not ready (retop_ready 1) after 15 s: $(head -n 3 "$T/serve.err")"
        n_=$((n_ - 1))
        sleep 0.1
    done
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
# The test's own time, last in its log: scripts/test lists the slowest.
TEST_T0=$(date +%s)
trap 'cleanup_pids; rm -rf "$T"; echo "# elapsed $(($(date +%s) - TEST_T0)) s"' EXIT
trap 'exit 1' HUP INT TERM
