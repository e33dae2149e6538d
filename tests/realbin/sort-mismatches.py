#!/usr/bin/env python3
"""sort-mismatches.py LIST.json CHECK.out

Sorts the mismatches of `gosym-oracle check` (run with GOSYM_ORACLE_DETAIL
large enough to print them all) into two kinds:

  refused: a function retop refuses ("no") because an instruction in it does
           not decode, and whose listed RET sites, if any, are all objdump's
           RETs: an honest refusal, a gap in the decoder;
  wrong:   everything else (an entry, name, offset, size, line or RET site
           that is not the truth, a function missing or extra).

Prints "wrong N" and "refused M", then one line per mismatch with its kind.
Exit status: 1 when a mismatch is wrong or CHECK.out holds no summary, else 0.
"""
import json
import re
import sys


def main():
    lst, check = sys.argv[1], sys.argv[2]
    funcs = {}
    with open(lst) as f:
        for line in f:
            if line.strip():
                o = json.loads(line)
                funcs.setdefault(o["name"], []).append(o)
    lines = open(check).read().split("\n")
    summary = re.match(r"checked (\d+) functions: (\d+) mismatches", lines[0] if lines else "")
    if not summary:
        sys.exit("sort-mismatches.py: %s: no summary line" % check)
    details = [l[2:] for l in lines[1:] if l.startswith("  ")]
    if len(details) != int(summary.group(2)):
        sys.exit("sort-mismatches.py: %s: %s mismatches, %d printed: raise GOSYM_ORACLE_DETAIL"
                 % (check, summary.group(2), len(details)))
    out, wrong, refused = [], 0, 0
    for d in details:
        name, _, what = d.partition(": ")
        kind = "wrong"
        rs = funcs.get(name, [])
        undecodable = rs and all(r["traceable"] == "no" and "does not decode" in (r.get("reason") or "")
                                 for r in rs)
        m = re.match(r"RET sites \[(.*)\], objdump finds \[(.*)\]$", what)
        if undecodable and m and set(m.group(1).split()) <= set(m.group(2).split()):
            kind = "refused"
        elif undecodable and what == 'has RET sites but traceable "no"':
            kind = "refused"
        if kind == "wrong":
            wrong += 1
        else:
            refused += 1
        reason = rs[0].get("reason") if rs else None
        out.append("%s %s: %s%s" % (kind, name, what, " (%s)" % reason if reason else ""))
    print("wrong %d" % wrong)
    print("refused %d" % refused)
    print("\n".join(out))
    sys.exit(1 if wrong else 0)


if __name__ == "__main__":
    main()
