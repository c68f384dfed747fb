#!/usr/bin/env python3
"""`tilejit bench --filter` on one tiny case: the command runs it, writes one
JSON document with the host, the limits and that case, and the figures
hold together (a decode-sized call: a time, calls/s, no roofline fraction).
Then the Python launch case: it runs against the build's Python package
(both medians, their difference, the target) or, where the package is not
built, reports "not available" without failing the run.

The flags mean what they mean in every verb: --json is a flag (the result
as JSON on stdout, or in -o's file), -o/--output PATH takes the path, and
--json goes with --report DIR (no "argument not expected"); a usage error
with --json is one JSON error object on stdout with exit status 2.

--threads LIST: a bad list (0, negative, more than the cores, junk) is such
a usage error naming the item; `--threads 1,all` runs every case at all
threads and the memory-bound one again at 1 thread (the document's
`scaling`: one entry per count, its limits and cases). Where this build's
CLI has no --threads (tools/tilejit.cpp does not pass it yet), these checks
say so and are not run.

    test_bench_cli.py TILEJIT
"""
import json
import os
import subprocess
import sys
import tempfile

CASE = "scatter/decode/T8-N8-D128-BS128-256blocks/norm/f16"


PYTHON_CASE = "python/launch/scale-f32-N16/numpy"


def check_python_launch(tilejit, failures):
    with tempfile.TemporaryDirectory() as out:
        path = os.path.join(out, "bench.json")
        run = subprocess.run(
            [tilejit, "bench", "--filter", "^" + PYTHON_CASE + "$", "--quick", "--json", "-o", path],
            capture_output=True, text=True, timeout=600)
        if run.returncode != 0:
            failures.append(f"{PYTHON_CASE}: exit status {run.returncode}: {run.stderr}")
            return
        doc = json.load(open(path, encoding="utf-8"))
    if [c["name"] for c in doc["cases"]] != [PYTHON_CASE]:
        failures.append(f"cases {[c['name'] for c in doc['cases']]}")
        return
    c, py = doc["cases"][0], doc.get("python", {})
    if c.get("error") is not None:
        failures.append(f"{PYTHON_CASE}: error {c['error']}")
    if c["extra"].get("target_difference_us") != 2.0:
        failures.append(f"{PYTHON_CASE}: no target: {c['extra']}")
    if not py.get("installed"):
        if c.get("generated_s") is not None or not c["note"].startswith("not available"):
            failures.append(f"{PYTHON_CASE}: without the Python side, not 'not available': {c}")
        print(f"note: the Python side did not run ({py.get('note')})")
        return
    g, p = c.get("generated_s") or 0, c.get("peer_s") or 0
    # Both sides timed (how long a call takes is the benchmark's report,
    # not a pass/fail criterion).
    if not (g > 0 and p > 0):
        failures.append(f"{PYTHON_CASE}: per-call times C++ {g}, Python {p}")
    elif abs(c["extra"].get("difference_us", 1e9) - (p - g) * 1e6) > 1e-6:
        failures.append(f"{PYTHON_CASE}: difference {c['extra']} is not the medians' {p - g}")
    if c.get("samples") != 5 or "k(x, y, 3)" not in c.get("peer_note", ""):
        failures.append(f"{PYTHON_CASE}: the Python side was not timed alternately: {c}")


def run_json(tilejit, args):
    """`tilejit bench ARGS`: its exit status and its stdout parsed as JSON
    (None where it is not one JSON document)."""
    run = subprocess.run([tilejit, "bench"] + args, capture_output=True, text=True, timeout=600)
    try:
        return run.returncode, json.loads(run.stdout)
    except ValueError:
        return run.returncode, None


def check_flag_meanings(tilejit, failures):
    """--json is a flag beside any other option; -o takes the path."""
    with tempfile.TemporaryDirectory() as out:
        # The command line: --json before --report parses, and --list
        # prints the names as one JSON array (no report is made).
        rc, doc = run_json(tilejit, ["--json", "--report", out, "--list", "--filter", "^" + CASE + "$"])
        if rc != 0 or doc != [CASE]:
            failures.append(f"bench --json --report DIR --list: status {rc}, stdout {doc!r}")
        if os.listdir(out):
            failures.append(f"--list made a report: {os.listdir(out)}")
        # -o: the same result in the file, nothing on stdout.
        path = os.path.join(out, "names.json")
        run = subprocess.run([tilejit, "bench", "--list", "--json", "-o", path, "--filter",
                              "^" + CASE + "$"], capture_output=True, text=True, timeout=600)
        if run.returncode != 0 or run.stdout or json.load(open(path, encoding="utf-8")) != [CASE]:
            failures.append(f"bench --list --json -o PATH: {run.returncode} {run.stdout!r}")
        # Without --json, the names as text.
        run = subprocess.run([tilejit, "bench", "--list", "--filter", "^" + CASE + "$"],
                             capture_output=True, text=True, timeout=600)
        if run.returncode != 0 or run.stdout != CASE + "\n":
            failures.append(f"bench --list: {run.returncode} {run.stdout!r}")
    # Usage errors: one JSON error object, exit status 2.
    for args, says in ((["--filter", "^no-such-case$"], "no case matches"),
                       (["--filter", "("], "bad --filter")):
        rc, doc = run_json(tilejit, args + ["--json"])
        err = (doc or {}).get("error", {}) if isinstance(doc, dict) else {}
        if rc != 2 or err.get("status") != 2 or says not in err.get("message", ""):
            failures.append(f"bench {args} --json: status {rc}, stdout {doc!r}")
    # --json takes no value: a path after it is an unexpected argument.
    rc, doc = run_json(tilejit, ["--json", "bench.json", "--list"])
    if rc == 0 or not isinstance(doc, dict) or "error" not in doc:
        failures.append(f"bench --json PATH was accepted: status {rc}, stdout {doc!r}")


SCALED_CASE = "gather/prefill/T8192-R16-N8-D128-BS128-256blocks/norm/f16"


def check_threads(tilejit, failures):
    """--threads: usage errors for bad lists; a run at 1 and all threads."""
    help_text = subprocess.run([tilejit, "bench", "--help"], capture_output=True, text=True,
                               timeout=60).stdout
    if "--threads" not in help_text:
        print("note: this tilejit's bench has no --threads option; its checks not run")
        return
    cores = os.cpu_count() or 1
    for bad, says in (("0", "'0' is no threads"), ("-1", "'-1' is negative"),
                      (str(cores + 1), f"'{cores + 1}' is more than"),
                      ("two", "'two' is not a thread count"), ("1,,2", "has an empty item")):
        rc, doc = run_json(tilejit, ["--threads", bad, "--list", "--json"])
        err = doc.get("error", {}) if isinstance(doc, dict) else {}
        if rc != 2 or err.get("status") != 2 or says not in err.get("message", ""):
            failures.append(f"bench --threads {bad}: status {rc}, stdout {doc!r}")
    with tempfile.TemporaryDirectory() as out:
        path = os.path.join(out, "bench.json")
        run = subprocess.run(
            [tilejit, "bench", "--threads", "1,all", "--quick", "--no-peer", "--json", "-o", path,
             "--filter", f"^({SCALED_CASE}|{CASE})$"], capture_output=True, text=True, timeout=600)
        if run.returncode != 0:
            failures.append(f"bench --threads 1,all: status {run.returncode}: {run.stderr}")
            return
        doc = json.load(open(path, encoding="utf-8"))
    counts = sorted({1, doc["host"]["threads"]})
    if doc["options"].get("threads") != counts:
        failures.append(f"options.threads {doc['options'].get('threads')} != {counts}")
    if sorted(c["name"] for c in doc["cases"]) != sorted([SCALED_CASE, CASE]):
        failures.append(f"cases {[c['name'] for c in doc['cases']]}")
    scaling = doc.get("scaling") or []
    if [e["threads"] for e in scaling] != counts:
        failures.append(f"scaling counts {[e['threads'] for e in scaling]} != {counts}")
    for e in scaling:
        # Only the memory-bound case (the decode-sized one is latency).
        names = [c["name"] for c in e["cases"]]
        if names != [SCALED_CASE]:
            failures.append(f"scaling at {e['threads']}: cases {names}")
            continue
        c = e["cases"][0]
        if e["limits"]["threads"] != e["threads"] or not e["limits"]["bandwidth"]:
            failures.append(f"scaling at {e['threads']}: limits {e['limits']}")
        if c.get("error") or not (c.get("of_bound") or 0) > 0 or not (c.get("GBs") or 0) > 0:
            failures.append(f"scaling at {e['threads']}: {c}")
    # The all-thread entry is the run's own case and limits.
    top = next((e for e in scaling if e["threads"] == doc["host"]["threads"]), None)
    main_case = next((c for c in doc["cases"] if c["name"] == SCALED_CASE), {})
    if top and top["cases"] and top["cases"][0]["of_bound"] != main_case.get("of_bound"):
        failures.append("the all-thread scaling entry is not the run's own case")


def check_json_with_report(tilejit, failures):
    """--json --report DIR: the document on stdout (nothing else there) and
    in DIR beside the report. Needs the report's matplotlib."""
    run = subprocess.run(["/usr/bin/python3" if os.path.exists("/usr/bin/python3") else "python3",
                          "-c", "import matplotlib"], capture_output=True)
    if run.returncode != 0:
        print("note: no matplotlib; --json --report not run")
        return
    with tempfile.TemporaryDirectory() as out:
        rc, doc = run_json(tilejit, ["--json", "--report", out, "--quick", "--no-peer",
                                     "--filter", "^" + CASE + "$"])
        names = sorted(os.listdir(out))
        if rc != 0 or not isinstance(doc, dict) or [c["name"] for c in doc["cases"]] != [CASE]:
            failures.append(f"bench --json --report: status {rc}, stdout {doc!r}")
            return
        stem = f"{doc['host']['name']}-{doc['commit']}"
        if stem + ".json" not in names or stem + ".md" not in names:
            failures.append(f"bench --json --report: the directory holds {names}")
        elif json.load(open(os.path.join(out, stem + ".json"), encoding="utf-8")) != doc:
            failures.append("bench --json --report: the file and stdout differ")


def main(argv):
    failures = []
    check_flag_meanings(argv[1], failures)
    check_threads(argv[1], failures)
    check_json_with_report(argv[1], failures)
    with tempfile.TemporaryDirectory() as out:
        path = os.path.join(out, "bench.json")
        run = subprocess.run(
            [argv[1], "bench", "--filter", "^" + CASE + "$", "--quick", "--no-peer", "--json",
             "--output", path],
            capture_output=True, text=True, timeout=600)
        if run.returncode != 0:
            print(run.stdout, run.stderr)
            print("FAIL: exit status", run.returncode)
            return 1
        if f"[1/1] {CASE}" not in run.stderr:
            failures.append(f"no progress line for the case: {run.stderr!r}")
        if run.stdout:
            failures.append(f"with -o, stdout is not empty: {run.stdout!r}")
        doc = json.load(open(path, encoding="utf-8"))
    names = [c["name"] for c in doc["cases"]]
    if names != [CASE]:
        failures.append(f"cases {names}")
    c = doc["cases"][0] if doc["cases"] else {}
    for key in ("name", "cpu", "flags", "threads"):
        if key not in doc["host"]:
            failures.append(f"host has no {key}")
    if not doc["limits"]["fma_GFLOPs"] > 0:
        failures.append("no FMA peak")
    if doc["peer"].get("installed") or "--no-peer" not in doc["peer"].get("note", ""):
        failures.append(f"peer {doc['peer']}")
    if c.get("error") is not None:
        failures.append(f"error {c.get('error')}")
    if c.get("bound") != "latency" or c.get("of_bound") is not None:
        failures.append(f"a decode-sized call is latency with no roofline fraction: {c}")
    g = c.get("generated_s") or 0
    if not g > 0:
        failures.append(f"generated_s {g}")
    elif abs(c["calls_per_s"] * g - 1) > 1e-9 or abs(c["us_per_call"] - g * 1e6) > 1e-6:
        failures.append("calls/s and µs per call do not match the time")
    if c.get("samples") != 3 or not c.get("handwritten_s") or not c.get("vs_handwritten"):
        failures.append(f"the twin was not timed alternately: {c}")
    check_python_launch(argv[1], failures)
    for f in failures:
        print("FAIL:", f)
    print(f"{len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
