#!/bin/sh
# Run every benchmark of tests/bench in sequence: overhead, placement,
# why-cost, split-cost, errors, budget, spawn, estimate, attach, index,
# listing, serve-cpu, tui, change, harm-package.
# Each prints its own figures; this exits 0 when none of them was broken
# (a skipped one, exit 77, is reported but not an error).
# Environment: abs_top_builddir (default SRCDIR/build) and each benchmark's own.
here=$(cd "$(dirname "$0")" && pwd)
status=0
for b in overhead placement why-cost split-cost errors budget spawn estimate attach index listing serve-cpu tui change harm-package; do
    echo "==== $b"
    start=$(date +%s)
    if "$here/$b.sh"; then rc=0; else rc=$?; fi
    echo "==== $b: exit $rc after $(($(date +%s) - start)) s"
    echo
    case $rc in
    0 | 77) ;;
    *) status=1 ;;
    esac
done
exit "$status"
