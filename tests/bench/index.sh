#!/bin/sh
# Index time and memory on a big stripped Go binary (default: the Go 1.19
# compiler, ~14,000 functions), side by side in one run, R rounds interleaved:
#   retop lookup          retop -v -l -x BIN FUNC: the whole index (names,
#                         sizes, entry file:line of every function), then one
#                         function listed with its RET sites; timed as a
#                         whole process, and the index alone as retop times
#                         it (-v prints it)
#   gosym                 gosym-oracle bench BIN: Go's debug/gosym loading
#                         the same table with the entry file:line of every
#                         function; timed as a whole process and inside it
#   retop full listing    retop -l -x BIN -o json >/dev/null: every function
#                         with its RET sites and their lines
# and peak RSS (/usr/bin/time %M) of retop -V (its shared libraries alone),
# the lookup and the full listing, against 3x the size of .gopclntab.
# Targets: gosym / retop >= 2, in-process against in-process and whole
# process against whole process; full listing < 1 s; peak RSS of the lookup
# and of the full listing <= 3x .gopclntab.
#
# Environment: R (5), INDEX_BIN, INDEX_FUNC (cmd/compile/internal/gc.Main),
# abs_top_builddir (default SRCDIR/build).
# A benchmark, not a test: exits 0 unless something is broken.

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$here/lib.sh"

R=${R:-5}
BIN=${INDEX_BIN:-/usr/lib/go-1.19/pkg/tool/linux_amd64/compile}
FUNC=${INDEX_FUNC:-cmd/compile/internal/gc.Main}

need_retop
need_cmd python3
need_cmd readelf
[ -x /usr/bin/time ] || skip "/usr/bin/time not found: apt-get install time"
[ -r "$BIN" ] || skip "$BIN not found: install golang-1.19-go or set INDEX_BIN"
need_fixture gosym-oracle

hex=$(readelf -SW "$BIN" | awk '{ for (i = 1; i < NF; i++) if ($i == ".gopclntab") print $(i + 4) }')
[ -n "$hex" ] || fail "$BIN has no .gopclntab section"
pclntab=$((0x$hex))

# to_null CMD...: run CMD with stdout to /dev/null, in this same process.
# shellcheck disable=SC2016 # expanded by that sh -c, not here
to_null='exec "$0" "$@" >/dev/null'
TIME=$here/timecmd.py

echo "index: $BIN, .gopclntab $pclntab bytes, lookup $FUNC, $R rounds interleaved"
: >"$T/results"
i=1
while [ "$i" -le "$R" ]; do
    {
        printf 'idx %s ' "$i"
        python3 "$TIME" -- "$RETOP" -v -l -x "$BIN" "$FUNC"
        printf 'gosym %s ' "$i"
        python3 "$TIME" -- "$ORACLE" bench "$BIN"
        printf 'full %s ' "$i"
        python3 "$TIME" -- sh -c "$to_null" "$RETOP" -l -x "$BIN" -o json
        for m in base idx full; do
            case $m in
            base) set -- -V ;;
            idx) set -- -l -x "$BIN" "$FUNC" ;;
            full) set -- -l -x "$BIN" -o json ;;
            esac
            /usr/bin/time -f %M -o "$T/rss" "$RETOP" "$@" >/dev/null 2>&1
            echo "rss_$m $i {\"kb\": $(tail -n 1 "$T/rss")}"
        done
    } >>"$T/results"
    i=$((i + 1))
done
"$RETOP" -l -x "$BIN" -o json 2>"$T/full.err" | wc -l >"$T/nfull"

python3 - "$T/results" "$pclntab" "$(cat "$T/nfull")" "$FUNC" <<'EOF'
import json, re, sys, statistics as st
res = {}
for line in open(sys.argv[1]):
    mode, rep, js = line.split(" ", 2)
    res.setdefault(mode, []).append(json.loads(js))
pcln, nfull, func = int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
broken = []
for m in ("idx", "gosym", "full"):
    for d in res[m]:
        if d["rc"] != 0:
            broken.append("%s exited %d: %s" % (m, d["rc"], d["stderr"].strip()))
for d in res["idx"]:
    if func not in d["stdout_tail"]:
        broken.append("retop -l did not list %s: %s" % (func, d["stdout_tail"].strip()))
    m = re.search(r"(\d+) functions indexed in ([0-9.]+) ms", d["stderr"])
    if not m:
        broken.append("retop -v printed no index time: %s" % d["stderr"].strip())
    else:
        d["funcs"], d["index_s"] = int(m.group(1)), float(m.group(2)) / 1e3
if broken:
    print("  BROKEN:")
    for b in sorted(set(broken)):
        print("    " + b)
    sys.exit(1)
for d in res["gosym"]:
    g = json.loads(d["stdout_tail"])
    d["funcs"], d["inproc_s"] = g["funcs"], g["seconds"]
if res["gosym"][0]["funcs"] != res["idx"][0]["funcs"]:
    print("  BROKEN: gosym has %d functions, retop %d"
          % (res["gosym"][0]["funcs"], res["idx"][0]["funcs"]))
    sys.exit(1)
med = lambda m, k: st.median(d[k] for d in res[m])
r_in, g_in = med("idx", "index_s"), med("gosym", "inproc_s")
r_whole, g_whole = med("idx", "total_s"), med("gosym", "total_s")
full = med("full", "total_s")
kb = {m: st.median(d["kb"] for d in res["rss_" + m]) for m in ("base", "idx", "full")}
lim = 3 * pcln / 1024


def verdict(ok):
    return "met" if ok else "NOT met"


print("\n  round   retop index   gosym in-process   retop lookup   gosym process   retop full listing")
for i, (a, b, c) in enumerate(zip(res["idx"], res["gosym"], res["full"]), 1):
    print("  %5d %11.4f s %16.4f s %12.4f s %13.4f s %18.3f s" % (
        i, a["index_s"], b["inproc_s"], a["total_s"], b["total_s"], c["total_s"]))
print("\n  functions: %d (both); retop full listing %d lines" % (res["idx"][0]["funcs"], nfull))
print("  medians:")
print("  in-process:    gosym %.4f s / retop index  %.4f s = %.2f   (target >= 2: %s)"
      % (g_in, r_in, g_in / r_in, verdict(g_in / r_in >= 2)))
print("  whole process: gosym %.4f s / retop lookup %.4f s = %.2f   (target >= 2: %s)"
      % (g_whole, r_whole, g_whole / r_whole, verdict(g_whole / r_whole >= 2)))
print("  retop full listing with RET sites  %.3f s   (target < 1 s: %s)"
      % (full, verdict(full < 1)))
print("  peak RSS: retop -V (its shared libraries) %d KiB, lookup %d KiB, full listing %d KiB"
      % (kb["base"], kb["idx"], kb["full"]))
print("  3x .gopclntab = %d KiB" % lim)
for m, name in (("idx", "lookup"), ("full", "full listing")):
    print("  %-12s peak %6d KiB = %.2fx .gopclntab (target <= 3x: %s)" % (
        name, kb[m], kb[m] * 1024 / pcln, verdict(kb[m] <= lim)))
EOF
