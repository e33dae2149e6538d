#!/bin/sh
# Bad input gets one clear line on stderr and exit 1 (runtime failure) or 2
# (usage error): never a crash, never a second line.
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"
need_cmd objdump
need_retop
need_fixture payments-default payments-stripped

# bad CODE REGEX ARGS...: retop ARGS exits CODE with one stderr line that
# matches REGEX (extended, case-insensitive).
bad() {
    code=$1 re=$2
    shift 2
    expect_exit "$code" "$RETOP" "$@"
    [ "$(wc -l <"$T/err")" -eq 1 ] ||
        fail "retop $*: expected one line on stderr, got: $(head -n 5 "$T/err")"
    grep -Eiq -- "$re" "$T/err" || fail "retop $*: stderr does not match /$re/: $(cat "$T/err")"
}

# patch FILE OFFSET OCTAL-BYTES: overwrite bytes in place.
patch() {
    # shellcheck disable=SC2059 # the format carries the octal escapes
    printf "$3" | dd of="$1" bs=1 seek="$2" conv=notrunc 2>/dev/null || fail "dd on $1"
}

bad 1 'no such file' -l -x "$T/missing"

echo "not a binary" >"$T/text"
bad 1 'not an ELF' -l -x "$T/text"

# Truncated: the ELF header survives, the section headers and pclntab do not.
for n in 1000 65536; do
    head -c "$n" "$FIXTURES/payments-default" >"$T/trunc$n"
    bad 1 'truncat|corrupt|invalid|not an ELF|gopclntab' -l -x "$T/trunc$n"
done

bad 1 'no \.gopclntab|not a Go program' -l -x /bin/true

# The pclntab of a stripped build is the only function table it has, so
# retop cannot fall back on .symtab or DWARF. Header (Go 1.18+): magic u32,
# 4 bytes, nfunc u64 at +8, nfiles +16, textStart +24, funcnameOffset +32.
pcln=$(objdump -h "$FIXTURES/payments-stripped" | awk '$2 == ".gopclntab" { print $6 }')
[ -n "$pcln" ] || fail "no .gopclntab section in payments-stripped"
pcln=$((0x$pcln))
huge='\377\377\377\377\377\377\377\177'

cp "$FIXTURES/payments-stripped" "$T/magic"
patch "$T/magic" "$pcln" '\0\0\0\0'
bad 1 'magic' -l -x "$T/magic"

cp "$FIXTURES/payments-stripped" "$T/nfunc"
patch "$T/nfunc" $((pcln + 8)) "$huge"
bad 1 'corrupt|invalid|range|truncat|bound|too (many|large|big)' -l -x "$T/nfunc"

cp "$FIXTURES/payments-stripped" "$T/funcname"
patch "$T/funcname" $((pcln + 32)) "$huge"
bad 1 'corrupt|invalid|range|truncat|bound|too (many|large|big)' -l -x "$T/funcname"

# Beyond PID_MAX_LIMIT (4194304): no such process can exist.
bad 1 'no such|not found|not exist|not running' -l -p 4194305

sleep 60 &
track_pid $!
bad 1 'not a Go program|no \.gopclntab' -l -p $!

bad 2 'usage|-x|-p' -l
exit 0
