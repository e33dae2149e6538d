#!/bin/sh
# Tables that lie are refused, the target is unharmed, every other function
# traces exactly.  Copies of the payments fixture are patched (lie.py) so
# that one function, main.CalculateTotal, is described wrongly:
#   entry+1  its .gopclntab entry moved one byte forward (stripped binary):
#            a probe there would land inside `cmp rsp, [r14+0x10]`
#   entry-1  moved one byte back, onto the int3 padding before it
#   pcsp     its pc-to-SP table's first change point moved inside an
#            instruction (stripped)
#   size+8   its .symtab size 8 bytes too large (unstripped)
#   size-8   8 bytes too small, cutting off its epilogue
# For each: `retop -l` says "no" with the reason, then the patched program
# runs traced (retop -b -p PID -t ProcessPayment -t ValidateCard -t
# CalculateTotal): CalculateTotal's status is the refusal, ProcessPayment and
# ValidateCard count exactly the fixture's own calls with its own clock, and
# the fixture finishes its work and exits 0 on SIGTERM.
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"
need_root
need_cmd python3
need_retop
need_fixture payments-stripped
need_fixture payments-default
lie() { python3 "$abs_top_srcdir/tests/integration/lie.py" "$@"; }

bad=main.CalculateTotal
good="main.ProcessPayment main.ValidateCard"

# check_lie LABEL BINARY REASON: the listing and a traced run of BINARY.
check_lie() {
    label=$1 bin=$2 reason=$3 list=$T/$1.list snap=$T/$1.snap out=$T/$1.out
    "$RETOP" -l -x "$bin" -o json main. >"$list" 2>"$T/$label.lerr" ||
        fail "$label: retop -l failed: $(head -n 3 "$T/$label.lerr")"
    python3 - "$list" "$bad" "$reason" $good <<'EOF' || fail "$label: retop -l -x $bin -o json main. does not refuse $bad alone"
import json, sys
path, bad, reason, good = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
fs = {}
for line in open(path):
    o = json.loads(line)
    fs[o["name"]] = o
b = fs.get(bad)
if not b or b["traceable"] != "no" or reason not in b["reason"]:
    sys.exit("listing: %s is %s (%s), expected no: ...%s..." %
             (bad, b and b["traceable"], b and b["reason"], reason))
for g in good:
    if fs[g]["traceable"] != "full":
        sys.exit("listing: %s is %s (%s), expected full" % (g, fs[g]["traceable"], fs[g]["reason"]))
EOF

    rm -f "$T/$label.ready"
    "$bin" -ready "$T/$label.ready" -calls 40 -workers 4 -out "$out" &
    fixture=$!
    track_pid "$fixture"
    wait_file "$T/$label.ready" 10 || fail "$label: the patched fixture did not start"
    retop_batch "$snap" -p "$fixture" -t main.ProcessPayment -t main.ValidateCard -t "$bad" -d 0.2
    fixture_go "$out" "$fixture"
    retop_snapshots 1
    retop_stop "$fixture"
    # shellcheck disable=SC2086 # $good is a list
    {
        sc status "$snap" "error: $bad: not traceable: " "$bad" &&
            sc exact "$snap" "$out" $good &&
            sc timing "$snap" "$out" 0.05 $good
    } || fail "$label: retop -b -p PID -t ... on the patched fixture: $bad not refused, or the others not exact"
    grep -q "$reason" "$snap.err" || fail "$label: the refusal is not on stderr: $(head -n 3 "$snap.err")"
    kill -TERM "$fixture"
    if wait "$fixture"; then rc=0; else rc=$?; fi
    [ "$rc" -eq 0 ] || fail "$label: the fixture exited $rc after SIGTERM"
    printf '%s: %s; ' "$label" "$(sc get "$snap" "$bad" status | cut -c1-90)"
    calls=$(sc get "$snap" main.ProcessPayment calls)
    printf 'ProcessPayment %s calls exact; ' "$calls"
}

S=$FIXTURES/payments-stripped
D=$FIXTURES/payments-default
lie entry "$S" "$T/entry+1" "$bad" 1 >/dev/null || fail "lie.py entry +1 failed"
lie entry "$S" "$T/entry-1" "$bad" -1 >/dev/null || fail "lie.py entry -1 failed"
lie pcsp "$S" "$T/pcsp" "$bad" >/dev/null || fail "lie.py pcsp failed"
lie size "$D" "$T/size+8" "$bad" 8 >/dev/null || fail "lie.py size +8 failed"
lie size "$D" "$T/size-8" "$bad" -8 >/dev/null || fail "lie.py size -8 failed"

check_lie entry+1 "$T/entry+1" "is not an instruction boundary"
check_lie entry-1 "$T/entry-1" "does not decode"
check_lie pcsp "$T/pcsp" "pc-to-SP table: change at +0xb is not an instruction boundary"
check_lie size+8 "$T/size+8" "size 0x7b in .symtab disagrees with the pc-to-SP table's 0x73"
check_lie size-8 "$T/size-8" "size 0x6b in .symtab disagrees with the pc-to-SP table's 0x73"
echo
