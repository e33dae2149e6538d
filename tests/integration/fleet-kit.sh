#!/bin/sh
# The fleet kit in deploy/, each piece against the real thing
# (tests/integration/fleet_kit.py does the parsing):
#  - deploy/kubernetes/retop-daemonset.yaml (read with python3-yaml): a
#    DaemonSet with hostPID, exactly the capabilities systemd/retop.service.in
#    documents, --serve on the port the pod declares, -x on the node's file
#    mounted at the same path, memory request and limit set, --max-memory
#    under the limit.  Its container's command line, with only the -x path
#    and the --serve address changed, runs as uid 0 with only those
#    capabilities (setpriv) against the payments fixture running as nobody
#    from a binary of mode 0700: it serves both functions, tracing, and sees
#    the process; what it takes (VmHWM + its BPF maps) fits the memory
#    request.  Without any one of the four capabilities it fails (exit 1) or,
#    without SYS_PTRACE, sees no process.  SIGTERM ends it with 0.
#  - deploy/prometheus/prometheus.yml runs in a real Prometheus (promtool
#    check config first), its Kubernetes discovery replaced by a static
#    target with the labels Kubernetes gives the DaemonSet's pod: the
#    relabelling keeps it and names the instance after the node; it loads
#    retop-alerts.yml, evaluates every rule without error, and none fires on
#    the healthy target.
#  - deploy/prometheus/retop-alerts.yml: promtool check rules and test rules;
#    every alert has a test where it fires and one where it stays silent, and
#    with every firing expectation removed promtool fails on each alert;
#    every metric the rules name is a family of the live /metrics page.
#  - deploy/grafana/retop-dashboard.json: its variables resolve through that
#    Prometheus as Grafana's would, and every panel's query, with the
#    variables substituted, returns finite data and names only metrics of the
#    live page.
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"
need_root
need_cmd python3
need_cmd setpriv
need_cmd timeout
need_cmd prometheus
need_cmd promtool
python3 -c 'import yaml' 2>/dev/null || skip "python3-yaml not found: run scripts/setup-deps"
need_retop
need_fixture payments-default
top=$abs_top_srcdir
fk() { python3 "$top/tests/integration/fleet_kit.py" "$@"; }
pq() { python3 "$top/tests/integration/promq.py" "$@"; }
fact() { sed -n "s/^$1=//p" "$T/facts"; }

# ---- the manifest's fields
fk manifest "$top" >"$T/facts" 2>"$T/err" || fail "$(cat "$T/err")"
caps=$(fact caps)
mem_request=$(fact mem_request)
target=$(fact target)

# ---- the alert rules, on recorded series
rules=$top/deploy/prometheus/retop-alerts.yml
promtool check rules "$rules" >"$T/out" 2>&1 || fail "promtool check rules: $(tail -n 5 "$T/out")"
promtool test rules "$top/deploy/prometheus/retop-alerts.test.yml" >"$T/out" 2>&1 ||
    fail "promtool test rules: $(grep -A 12 FAILED "$T/out" | head -n 20)"
alerts=$(fk coverage "$top" "$T/mutant.test.yml" 2>"$T/err") || fail "$(cat "$T/err")"
promtool test rules "$T/mutant.test.yml" >"$T/out" 2>&1 &&
    fail "promtool test rules passes with every firing expectation removed"
for a in $alerts; do
    grep -q "alertname: $a," "$T/out" ||
        fail "$a: promtool accepts its tests with its firing expectations removed"
done

# ---- the service: the payments fixture as another user (nobody), from a
#      binary retop may not read without CAP_DAC_READ_SEARCH
chmod 711 "$T"
box=$T/box
mkdir -p "$box/run"
cp "$FIXTURES/payments-default" "$box/payments-api"
chown 65534:65534 "$box/payments-api" "$box/run"
chmod 700 "$box/payments-api"
chmod 755 "$box"
setpriv --reuid=65534 --regid=65534 --clear-groups \
    "$box/payments-api" -ready "$box/run/ready" -loop -workers 4 >/dev/null 2>&1 &
fixture=$!
track_pid "$fixture"
wait_file "$box/run/ready" 10 || fail "the fixture did not become ready in 10 s"
kill -USR1 "$fixture"

# ---- the container's command line: the manifest's args with -x on the
#      fixture (--serve's address is start_serve's), as uid 0 with only the
#      manifest's capabilities
fk argv "$top" 127.0.0.1:0 "$box/payments-api" >"$T/argv" || fail "cannot read the manifest's args"
if [ "$(sed -n 1p "$T/argv")" != --serve ] || [ "$(sed -n 2p "$T/argv")" != 127.0.0.1:0 ]; then
    fail "the manifest's args do not begin with --serve ADDR: $(tr '\n' ' ' <"$T/argv")"
fi
awk 'prev == "-t" || prev == "--trace" { print } { prev = $0 }' "$T/argv" >"$T/patterns"
real_retop=$RETOP
cat >"$T/retop-caps" <<EOF
#!/bin/sh
exec setpriv --inh-caps="\$CAPS" --bounding-set="\$CAPS" "$real_retop" "\$@"
EOF
chmod 755 "$T/retop-caps"
RETOP=$T/retop-caps
sed 1,2d "$T/argv" >"$T/args"
set --
while IFS= read -r a; do set -- "$@" "$a"; done <"$T/args"
CAPS="-all,$caps"
export CAPS

# wait_page URL: until /metrics says retop_ready 1; the page in $T/page.
wait_page() {
    n=150
    while [ $n -gt 0 ]; do
        pq get "$1/metrics" >"$T/page" 2>/dev/null && grep -q '^retop_ready 1$' "$T/page" && return 0
        n=$((n - 1))
        sleep 0.1
    done
    return 1
}

start_serve 19400 19499 "$@"
retop=$RP
url=http://127.0.0.1:$PORT

# ---- the deploy's Prometheus configuration, with the rules, scraping it
#      (it starts while retop attaches)
pport=$(pq freeport 19500 19599) || fail "no free port for Prometheus"
fk promconf "$top" "127.0.0.1:$PORT" node-1 "$T/prom.yml" || fail "cannot adapt prometheus.yml"
promtool check config "$T/prom.yml" >"$T/out" 2>&1 || fail "promtool check config: $(tail -n 5 "$T/out")"
prometheus --config.file="$T/prom.yml" --storage.tsdb.path="$T/tsdb" \
    --web.listen-address="127.0.0.1:$pport" --log.level=warn >"$T/prom.err" 2>&1 &
track_pid $!
prom=http://127.0.0.1:$pport

# ---- the manifest's retop: ready, tracing, seeing the process
wait_page "$url" || fail "the manifest's retop never became ready: $(head -n 3 "$T/serve.err")"
[ "$(cat "/proc/$retop/comm")" = retop ] || fail "PID $retop is not retop"
grep -q '^retop_target_processes{.*} 1$' "$T/page" ||
    fail "the manifest's retop does not see the fixture's process: $(grep '^retop_target_processes' "$T/page")"
sed -n 's/^retop_function_status{function="\([^"]*\)".*status="tracing"} 1$/\1/p' "$T/page" >"$T/tracing"
while IFS= read -r p; do
    found=""
    while IFS= read -r f; do
        # shellcheck disable=SC2254 # $p is a glob, as -t takes it
        case $f in $p) found=$f ;; esac
    done <"$T/tracing"
    [ -n "$found" ] || fail "-t $p: no function tracing: $(grep '^retop_function_status' "$T/page")"
done <"$T/patterns"

# ---- its footprint against the manifest's memory request
fk footprint "$retop" >"$T/foot" || fail "cannot measure retop's memory"
read -r hwm maps nmaps <"$T/foot"
[ "$maps" -gt 0 ] || fail "retop holds no BPF map"
[ $((hwm + maps)) -le "$mem_request" ] ||
    fail "retop takes $((hwm + maps)) bytes (VmHWM $hwm + $nmaps BPF maps $maps), over the manifest's memory request $mem_request"

# ---- each capability is needed: drop one at a time
for drop in $(echo "$caps" | tr ',' ' '); do
    CAPS=-all
    for k in $(echo "$caps" | tr ',' ' '); do
        [ "$k" = "$drop" ] || CAPS="$CAPS,$k"
    done
    case $drop in
    +sys_ptrace)
        # the probes attach to the file, but no process of another user is seen
        start_serve 19400 19499 "$@"
        wait_page "http://127.0.0.1:$PORT" || fail "without $drop, retop never became ready"
        sleep 1.5
        pq get "http://127.0.0.1:$PORT/metrics" >"$T/page2" || fail "GET /metrics failed"
        for pg in "$T/page" "$T/page2"; do
            grep -q '^retop_target_processes{.*} 0$' "$pg" ||
                fail "without $drop, retop still sees the fixture: $(grep '^retop_target_processes' "$pg")"
        done
        kill -TERM "$RP"
        wait "$RP" || fail "without $drop, retop did not exit 0 on SIGTERM"
        ;;
    *)
        p2=$(pq freeport 19400 19499) || fail "no free port"
        expect_exit 1 timeout 30 "$T/retop-caps" --serve "127.0.0.1:$p2" "$@"
        grep -qi 'permi' "$T/err" || fail "without $drop: $(head -n 2 "$T/err")"
        ;;
    esac
done

# ---- Prometheus: the relabelled target, the rules' state, the dashboard
pq wait "$prom" 'up{job="retop",instance="node-1"}' 30 >/dev/null ||
    fail "Prometheus did not scrape retop as job retop, instance node-1: $(tail -n 3 "$T/prom.err")"
# Calls in a 10 s window, for the rates ($__rate_interval is 10 s here).
pq wait "$prom" 'sum(rate(retop_function_duration_seconds_count{job="retop"}[10s]))' 20 >/dev/null ||
    fail "no calls of the fixture in Prometheus: $(head -n 3 "$T/serve.err")"
pq get "$url/metrics" >"$T/page" || fail "GET /metrics failed"
fk rules "$top" "$prom" "$T/page" >"$T/states" 2>"$T/err" || fail "$(cat "$T/err")"
grep -v ' inactive$' "$T/states" >"$T/out" &&
    fail "alerts not inactive on a healthy target: $(tr '\n' ' ' <"$T/out")"
summary=$(fk dashboard "$top" "$prom" "$T/page" 2>"$T/err") || fail "$(cat "$T/err")"

# ---- the pod's end: SIGTERM, exit 0
term_exits_0 "$retop" 5 retop
kill -0 "$fixture" || fail "the fixture died while traced"
kill -KILL "$fixture"
echo "$target as $box/payments-api, caps $caps: VmHWM $hwm + BPF maps $maps ($nmaps) = $(( (hwm + maps) / 1048576 )) MiB <= request $((mem_request / 1048576)) MiB; alerts: $alerts; dashboard: $summary"
