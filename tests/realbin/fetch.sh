#!/bin/sh
# fetch.sh NAME: print the path of a real Go binary that nobody here wrote,
# fetched once from the npm registry at a pinned version and checked against
# the registry's pinned sha512 before it is unpacked.
#
#     fetch.sh --list        the names it knows, one a line
#
# The tarballs come from `npm pack` (the registry only, no other network
# source) into ${RETOP_REALBIN_CACHE:-~/.cache/retop/realbin}, outside the
# source tree.  A second call reuses the cache after checking the tarball's
# sha512 again and the unpacked binary's sha256 recorded when it was unpacked.
# Exit status: 0 ok, 1 fetch or check failed, 2 usage.
set -eu

# name  npm package@version  sha512 (npm's dist.integrity)  binary in the tarball
PINS='
esbuild-0.17.19 @esbuild/linux-x64@0.17.19 sha512-68ngA9lg2H6zkZcyp22tsVt38mlhWde8l3eJLWkyLrp4HwMUr3c1s/M2t7+kHIhvMjglIBrFpncX1SzMckomGw== package/bin/esbuild
esbuild-0.21.5 @esbuild/linux-x64@0.21.5 sha512-1rYdTpyv03iycF1+BhzrzQJCdOuAOtaqHTWJZCWvijKD2N5Xu0TtVC8/+1faWqcP9iBCWOmjmhoH94dH82BxPQ== package/bin/esbuild
esbuild-0.28.2 @esbuild/linux-x64@0.28.2 sha512-4xTZr1FUmSoQW4XIWmit3tzQrUTZM+N3P0XV8xROKYF50XfI7xeO90+1bZvNwxIufQ9hDQVRJH5YhgPVF8A/HQ== package/bin/esbuild
lefthook-2.2.2 lefthook-linux-x64@2.2.2 sha512-N/OlQyAhcU6RAXjrwFxLsh70sn96rBoi+XkuLJ8CVBkk9Ci3VDXQayDZTNz5B1xML8RwoMcV8Wblniy1xFOmSA== package/bin/lefthook
buf-1.75.0 @bufbuild/buf-linux-x64@1.75.0 sha512-YGGJAx0lpMCE7aMWjNOJcfoEaG/e+iYHnTC4SZ0P5eS4IffMryA9Z4/bb1m1wNXAEJ8ATFMEZOAk/5x9VE47ig== package/bin/buf
'

die() {
	echo "fetch.sh: $*" >&2
	exit 1
}

[ $# -eq 1 ] || { echo "usage: fetch.sh NAME | --list" >&2; exit 2; }
if [ "$1" = --list ]; then
	echo "$PINS" | awk 'NF { print $1 }'
	exit 0
fi
arg=$1
# shellcheck disable=SC2046 # split the pin's four fields
set -- $(echo "$PINS" | awk -v n="$arg" '$1 == n')
[ $# -eq 4 ] || { echo "fetch.sh: no pinned binary named '$arg': see fetch.sh --list" >&2; exit 2; }
name=$1 spec=$2 want=$3 member=$4

cache=${RETOP_REALBIN_CACHE:-${HOME:-/root}/.cache/retop/realbin}
mkdir -p "$cache" || die "cannot create the cache directory $cache"
dir=$cache/$name tgz=$cache/$name.tgz bin=$cache/$name/$member

# sha512 as npm writes it: "sha512-" and the base64 digest.
integrity() {
	python3 -c 'import base64, hashlib, sys
h = hashlib.sha512()
with open(sys.argv[1], "rb") as f:
    for b in iter(lambda: f.read(1 << 20), b""):
        h.update(b)
print("sha512-" + base64.b64encode(h.digest()).decode())' "$1"
}

# Tests run in parallel: one fetch of a name at a time.
exec 9>"$cache/.$name.lock"
flock 9 || die "cannot lock $cache/.$name.lock"

if [ -f "$tgz" ] && [ -f "$dir/.sha256" ]; then
	[ "$(integrity "$tgz")" = "$want" ] ||
		die "$tgz does not match the pinned sha512 of $spec: remove $tgz and $dir and run again"
	(cd "$dir" && sha256sum --status -c .sha256) ||
		die "$bin changed since it was unpacked from $tgz: remove $dir and run again"
	echo "$bin"
	exit 0
fi

command -v npm >/dev/null 2>&1 || die "npm not found: install npm (scripts/setup-deps)"
command -v python3 >/dev/null 2>&1 || die "python3 not found: install python3"
tmp=$(mktemp -d "$cache/.$name.XXXXXX") || die "mktemp in $cache failed"
trap 'rm -rf "$tmp"' EXIT
# --ignore-scripts: nothing from the package runs; a private npm cache keeps
# the user's own out of it.
(cd "$tmp" && npm pack "$spec" --ignore-scripts --loglevel=error \
	--cache "$tmp/npm-cache" >"$tmp/pack.out" 2>"$tmp/pack.err") ||
	die "npm pack $spec failed: $(tail -n 3 "$tmp/pack.err")"
file=$(find "$tmp" -maxdepth 1 -name "*.tgz" | head -n 1)
[ -n "$file" ] || die "npm pack $spec left no tarball: $(tail -n 3 "$tmp/pack.err")"
got=$(integrity "$file")
[ "$got" = "$want" ] || die "$spec: sha512 is $got, pinned $want: refusing it"
mkdir "$tmp/x"
tar -xzf "$file" -C "$tmp/x" "$member" || die "$spec: no $member in the tarball"
[ -f "$tmp/x/$member" ] || die "$spec: no $member in the tarball"
chmod 0755 "$tmp/x/$member"
(cd "$tmp/x" && sha256sum "$member" >.sha256)
rm -rf "$dir"
mv "$tmp/x" "$dir" || die "cannot move $name into $cache"
mv "$file" "$tgz" || die "cannot move $name.tgz into $cache"
echo "$bin"
