#!/bin/sh
# The Go text start is proven, never guessed: runtime.text, the runtime's
# module data (found through its pointer to the function table) and the
# table header's text start (Go 1.18-1.25) must agree.  On a stripped build
# (payments-stripped) each witness is damaged in a copy:
#   - header zeroed (as Go >= 1.26 writes it): the module data alone still
#     gives every entry of the unstripped twin (payments-default);
#   - header or module data moved by 0x100: one line, exit 1, no listing;
#   - header zeroed and module data gone: one line, exit 1.
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"
need_cmd python3
need_cmd nm
need_retop
need_fixture payments-default payments-stripped

# patch.py MODE IN OUT: write IN's copy with one witness damaged.
cat >"$T/patch.py" <<'PY'
import struct, subprocess, sys
mode, src, dst = sys.argv[1:]
data = bytearray(open(src, "rb").read())
sec = {}
for l in subprocess.check_output(["readelf", "-SW", src], text=True).splitlines():
    p = l.split("]", 1)[-1].split()
    if len(p) > 4 and p[0].startswith("."):
        sec[p[0]] = (int(p[2], 16), int(p[3], 16), int(p[4], 16))
addr, off, size = sec[".gopclntab"]
hdr_text = off + 24
# runtime.firstmoduledata: an 8-aligned word equal to the table's address
# in .noptrdata/.data whose next word is funcnametab (header word at +32).
md, fn = None, struct.unpack_from("<Q", data, off + 32)[0]
for name in (".noptrdata", ".data"):
    a, o, n = sec[name]
    for i in range(o + (-a % 8), o + n - 192, 8):
        w0, w1 = struct.unpack_from("<QQ", data, i)
        if w0 == addr and w1 == addr + fn:
            md = i
if md is None:
    sys.exit("no module data found")
text = struct.unpack_from("<Q", data, hdr_text)[0]
if mode == "hdr-zero":
    struct.pack_into("<Q", data, hdr_text, 0)
elif mode == "hdr-moved":
    struct.pack_into("<Q", data, hdr_text, text + 0x100)
elif mode == "md-moved":
    # text (word 22) and minpc/maxpc (20, 21) moved together: consistent
    # with the table, and still not the header's.
    for w in (20, 21, 22, 23):
        v = struct.unpack_from("<Q", data, md + 8 * w)[0]
        struct.pack_into("<Q", data, md + 8 * w, v + 0x100)
elif mode == "none":
    struct.pack_into("<Q", data, hdr_text, 0)
    struct.pack_into("<Q", data, md, 0)
open(dst, "wb").write(data)
PY

# bad NAME REGEX: retop -l on the damaged copy NAME exits 1 with one line.
bad() {
    expect_exit 1 "$RETOP" -l -x "$T/$1"
    [ "$(wc -l <"$T/err")" -eq 1 ] || fail "$1: expected one line on stderr: $(head -n 5 "$T/err")"
    grep -Eq -- "$2" "$T/err" || fail "$1: stderr does not match /$2/: $(cat "$T/err")"
    [ ! -s "$T/out" ] || fail "$1: refused, yet listed: $(head -n 3 "$T/out")"
}

for m in hdr-zero hdr-moved md-moved none; do
    python3 "$T/patch.py" "$m" "$FIXTURES/payments-stripped" "$T/$m" || fail "patch $m"
done

# Header zeroed: entries from the module data equal the twin's symbols.
expect_exit 0 "$RETOP" -l -x "$T/hdr-zero" -o json
[ ! -s "$T/err" ] || fail "hdr-zero: warnings: $(head -n 3 "$T/err")"
nm "$FIXTURES/payments-default" | sed -n 's/^\([0-9a-f]*\) [tT] \(.*\)$/\2 \1/p' >"$T/twin"
python3 -c '
import json, sys
want = {}
for l in open(sys.argv[2]):
    name, addr = l.rsplit(" ", 1)
    want.setdefault(name, set()).add(int(addr, 16))
n = 0
for l in open(sys.argv[1]):
    f = json.loads(l)
    s = want.get(f["name"], set()) | want.get(f["name"] + ".abi0", set())
    if s and f["entry"] not in s:
        sys.exit("%s at 0x%x, the twin says %s" % (f["name"], f["entry"], sorted(s)))
    n += bool(s)
if n < 1000:
    sys.exit("only %d functions compared" % n)
print("hdr-zero: %d entries equal the twin'"'"'s symbols" % n)
' "$T/out" "$T/twin" || fail "hdr-zero: an entry differs from the unstripped twin"

bad hdr-moved 'not proven.*disagree'
bad md-moved 'not proven.*disagree'
bad none 'cannot prove where Go text starts'
