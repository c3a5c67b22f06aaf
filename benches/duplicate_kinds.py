#!/usr/bin/env python3
"""Sorts the rows of a `duplicates --most 200` listing by what their lines are.

A pair counts as *declarations* when at most 15% of the non-blank, non-comment lines on its
two sides are something other than a struct field, a function parameter or signature, an
attribute, an enum variant, a list item (string or `name = value`), a C parameter, or lone
punctuation; every other pair counts as *code*. Prints the counts by kind (and by the tool's
own "boilerplate" mark), then each code pair with its share of other lines.

Usage: duplicates --most 200 --seconds 120 > dups.txt && python3 benches/duplicate_kinds.py dups.txt
(run from the repository root: the listing's paths are read as files).
"""

import collections
import re
import sys

KINDS = {
    "field": re.compile(r"^(pub(\([\w:]+\))?\s+)?(r#)?\w+:\s*[^=]+,?$"),
    "attribute": re.compile(r"^#!?\[.*\]?$|^[\w_]+ = .*,$|^\)\]$|^long,$|^[a-z_]+,$"),
    "parameter": re.compile(r"^(mut\s+)?\w+:\s*.+,$|^&?(mut\s+)?self,$"),
    "signature": re.compile(
        r"^(pub(\([\w:]+\))?\s+)?(unsafe\s+)?(extern \"C\"\s+)?(fn|struct|enum|impl|trait|type|const|static|mod)\b.*"
        r"|^\)\s*(->.*)?\{?;?$|^\}[,;]?$|^[{}()\[\];,]+$|^where$|^[A-Z]\w*(\(.*\))?,$|^[A-Z]\w* \{$"
        r"|^\"[^\"]*\",?$|^\w+\s*=\s*[\w\"\.\-]+,?$"
    ),
    "c parameter": re.compile(
        r"^(const\s+)?(unsigned\s+)?(int|double|float|long long|char|size_t|bool|void)\*?\s*(\*\s*)?"
        r"(__restrict__\s*)?\w+[,)]?.*$"
    ),
}
ROW = re.compile(r"(D\d+) (\S+):(\d+)-(\d+) ~ (\S+):(\d+)-(\d+)")


def kinds_of(path, first, last):
    """Counts the kinds of the lines first..last (1-based) of `path`, comments and blanks left out."""
    counts = collections.Counter()
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")[first - 1 : last]
    for line in (x.strip() for x in lines):
        if not line or line.startswith("//") or (line.startswith("#") and not line.startswith("#[")):
            continue
        counts[next((k for k, p in KINDS.items() if p.match(line)), "other")] += 1
    return counts


def main(listing):
    totals = collections.Counter()
    code = []
    with open(listing, encoding="utf-8") as f:
        rows = [r.strip() for r in f if ROW.match(r)]
    for row in rows:
        _, f1, a1, b1, f2, a2, b2 = ROW.match(row).groups()
        counts = kinds_of(f1, int(a1), int(b1)) + kinds_of(f2, int(a2), int(b2))
        other = counts["other"] / max(1, sum(counts.values()))
        kind = "declarations" if other <= 0.15 else "code"
        totals[(kind, "boilerplate" in row)] += 1
        if kind == "code":
            code.append(f"{other:.2f} {row}")
    for (kind, boiler), n in sorted(totals.items()):
        print(f"{kind:12} {'boilerplate' if boiler else 'not marked':11} {n}")
    print(f"pairs: {len(rows)}")
    print("\n".join(code))


if __name__ == "__main__":
    main(sys.argv[1])
