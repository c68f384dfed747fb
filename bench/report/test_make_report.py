#!/usr/bin/env python3
"""The report generator on a canned document (testdata/canned.json): the
page has a summary and one table per operator, the plots exist as PNG and
SVG, every figure in the tables reads back as the document's value (to the
digits shown), and a document without a peer says "peer not installed".

    test_make_report.py            (exit 0: pass; 77: matplotlib missing)
"""
import copy
import json
import os
import re
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import make_report  # noqa: E402

UNITS = {"s": 1.0, "ms": 1e-3, "µs": 1e-6, "ns": 1e-9}


def parse_time(text):
    m = re.fullmatch(r"([0-9.e+-]+) (s|ms|µs|ns)( per call)?", text)
    assert m, f"not a time: {text!r}"
    return float(m.group(1)) * UNITS[m.group(2)]


def close(a, b, digits=3):
    """Equal to the significant digits printed."""
    return abs(a - b) <= abs(b) * 10 ** (1 - digits) / 2 + 1e-300


def table_rows(md, header_start):
    """The rows (cell lists) of every table whose header starts with
    `header_start`."""
    rows, lines, i = [], md.splitlines(), 0
    while i < len(lines):
        if lines[i].startswith(header_start):
            i += 2
            while i < len(lines) and lines[i].startswith("|"):
                rows.append([c.strip() for c in lines[i].strip("|").split("|")])
                i += 1
        i += 1
    return rows


def check(doc, outdir, failures):
    path, summary = make_report.report(doc, outdir)
    md = open(path, encoding="utf-8").read()
    stem = f"{doc['host']['name']}-{doc['commit']}"
    assert os.path.basename(path) == stem + ".md"

    # One section per operator, in the document's order.
    ops = list(dict.fromkeys(c["op"] for c in doc["cases"]))
    positions = [md.find("## " + make_report.OP_TITLES[op]) for op in ops]
    if -1 in positions or positions != sorted(positions):
        failures.append(f"operator sections missing or out of order: {positions}")

    # Every case has a row whose figures read back as the document's.
    rows = {r[0].replace(" (in cache)", ""): r for r in table_rows(md, "| case |")}
    for c in doc["cases"]:
        r = rows.get(c["name"])
        if r is None:
            failures.append(f"no row for {c['name']}")
            continue
        if c["error"]:
            if c["error"] not in r[2]:
                failures.append(f"{c['name']}: error not shown: {r}")
            continue
        if not close(parse_time(r[2]), c["generated_s"]):
            failures.append(f"{c['name']}: time {r[2]} != {c['generated_s']}")
        if c["bound"] == "compute" and not close(float(r[3].split()[0]), c["GFLOPs"], 4):
            failures.append(f"{c['name']}: GFLOP/s {r[3]} != {c['GFLOPs']}")
        if c["bound"] in ("read", "copy") and not close(float(r[3].split()[0]), c["GBs"], 4):
            failures.append(f"{c['name']}: GB/s {r[3]} != {c['GBs']}")
        if c["bound"] == "latency" and not close(float(r[3].split()[0]), c["calls_per_s"], 4):
            failures.append(f"{c['name']}: calls/s {r[3]} != {c['calls_per_s']}")
        for col, key in ((5, "of_bound"), (6, "vs_handwritten"), (7, "vs_peer")):
            want = c[key]
            if want is None:
                if r[col]:
                    failures.append(f"{c['name']}: {key} shown as {r[col]!r} but absent")
            elif not r[col] or abs(float(r[col]) - want) > 0.005 + 1e-9:
                failures.append(f"{c['name']}: {key} {r[col]!r} != {want}")
        if c["bound"] == "latency" and r[5]:
            failures.append(f"{c['name']}: a decode-sized call has no roofline fraction")

    # The summary: one line per operator with a case that ran.
    srows = table_rows(summary, "| operator |")
    if [r[0] for r in srows] != [op for op in ops if any(
            not c["error"] and c["generated_s"] for c in doc["cases"] if c["op"] == op)]:
        failures.append(f"summary rows {[r[0] for r in srows]}")
    if summary not in md:
        failures.append("the summary table is not on the page")

    # Limits on the page.
    fma = doc["limits"]["fma_GFLOPs"]
    if f"{fma:.4g} GFLOP/s" not in md:
        failures.append("the FMA peak is not on the page")
    bw = {r[0]: r for r in table_rows(md, "| working set | read from memory |")}
    for b in doc["limits"]["bandwidth"]:
        r = bw.get(make_report.fmt_bytes(b["bytes"]))
        want = [f"{b['read_GBs']:.4g} GB/s ({b['read_probe']})",
                f"{b['copy_GBs']:.4g} GB/s ({b['copy_probe']})",
                f"{b['warm_read_GBs']:.4g} GB/s ({b['warm_read_probe']})"]
        if not r or r[1:4] != want:
            failures.append(f"bandwidth row {r} != {want}")

    # Plots: PNG and SVG each, non-empty, linked from the page.
    kinds = ["roofline", "compile"] + [op for op in ops if op != "compile" and any(
        c["generated_s"] for c in doc["cases"] if c["op"] == op)]
    for kind in kinds:
        for ext in ("png", "svg"):
            p = os.path.join(outdir, f"{stem}-{kind}.{ext}")
            if not os.path.exists(p) or os.path.getsize(p) < 1000:
                failures.append(f"plot {p} missing or empty")
        if f"({stem}-{kind}.png)" not in md:
            failures.append(f"plot {kind} not linked")
    return md


def main():
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        print("matplotlib is not installed (Debian: python3-matplotlib)")
        return 77
    doc = json.load(open(os.path.join(HERE, "testdata", "canned.json"), encoding="utf-8"))
    failures = []
    with tempfile.TemporaryDirectory() as out:
        md = check(doc, out, failures)
        if "PyTorch 1.13.1 on 2 threads" not in md or "libopenblas" not in md:
            failures.append("the peer's set-up is not described")
    # Without a peer: the page says so, and the peer columns are empty.
    nopeer = copy.deepcopy(doc)
    nopeer["peer"] = {"installed": False, "note": "peer not installed: torch does not import"}
    for c in nopeer["cases"]:
        c["peer_s"] = c["vs_peer"] = None
    with tempfile.TemporaryDirectory() as out:
        md = check(nopeer, out, failures)
        if "peer not installed" not in md:
            failures.append("no 'peer not installed' on a page without a peer")
    for f in failures:
        print("FAIL:", f)
    print(f"{len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
