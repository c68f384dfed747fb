#!/usr/bin/env python3
"""The report generator on a canned document (testdata/canned.json): the
page has a summary and one table per operator, the plots exist as PNG and
SVG, every figure in the tables reads back as the document's value (to the
digits shown), and a document without a peer says "peer not installed". The
python/ cases have their own table ("Python overhead") whose figures read
back with the target beside each and whether it is met; a case without its
Python side says "not available"; a document without python/ cases has no
such section. A peer whose process loaded the reference BLAS is "no peer
(reference BLAS)": the page names the BLAS and no case has a peer ratio; the
BLAS detection (bench/peer/blas.py) reads fake /proc/PID/maps texts. A run
at several thread counts (testdata/scaling.json: the document's `scaling`)
has a "Thread scaling" table whose figures read back; a run at one count
has none. The compile section's "Compile latency" table has a row per
cold-compile case (compile/cold/...) whose time, stages and mapped bytes
read back, an error shown where one failed, a link column for documents of
older runs that have one; its "Kernel memory" table has a column per
compile/memory/ case whose figures read back, with "the bound held" yes,
no, or "yes (never full)" for a stream that evicted nothing; a document
without such cases has neither table.

    test_make_report.py            (exit 0: pass; 77: matplotlib missing)
    python3 -m pytest bench/report (the test_* functions; the same checks)
"""
import copy
import json
import os
import re
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "peer"))
import blas  # noqa: E402
import make_report  # noqa: E402

UNITS = {"s": 1.0, "ms": 1e-3, "µs": 1e-6, "ns": 1e-9}


BYTE_UNITS = {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}


def parse_bytes(text):
    """A size as make_report writes it: '12 KiB', '-1.2 MiB', '16,384 KiB'."""
    m = re.fullmatch(r"(-?[0-9.,e+]+) (B|KiB|MiB|GiB)", text)
    assert m, f"not a size: {text!r}"
    return float(m.group(1).replace(",", "")) * BYTE_UNITS[m.group(2)]


def parse_time(text):
    m = re.fullmatch(r"([0-9.e+-]+) (s|ms|µs|ns)( per call| per launch)?", text)
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
    rows = {r[0].replace(" (in cache)", ""): r for r in table_rows(md, "| case | working set |")}
    for c in doc["cases"]:
        if c["op"] == "python":
            continue
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

    check_python(doc, md, failures)
    check_compile_tables(doc, md, failures)

    # The summary: one line per operator with a case that ran (the python/
    # cases are not an operator).
    srows = table_rows(summary, "| operator |")
    if [r[0] for r in srows] != [op for op in ops if op != "python" and any(
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
    kinds = ["roofline", "compile"] + [op for op in ops if op not in ("compile", "python") and any(
        c["generated_s"] for c in doc["cases"] if c["op"] == op)]
    for kind in kinds:
        for ext in ("png", "svg"):
            p = os.path.join(outdir, f"{stem}-{kind}.{ext}")
            if not os.path.exists(p) or os.path.getsize(p) < 1000:
                failures.append(f"plot {p} missing or empty")
        if f"({stem}-{kind}.png)" not in md:
            failures.append(f"plot {kind} not linked")
    return md


def check_compile_tables(doc, md, failures):
    """The "Compile latency" table (a row per compile/cold/ case) and the
    "Kernel memory" table (a column per compile/memory/ case): every figure
    reads back as the document's, to the digits shown."""
    cold = [c for c in doc["cases"] if c["name"].startswith("compile/cold/")]
    mem = [c for c in doc["cases"] if c["name"].startswith("compile/memory/")]
    if bool(cold) != ("### Compile latency" in md):
        failures.append(f"{len(cold)} cold-compile cases, Compile latency table: {'### Compile latency' in md}")
    if bool(mem) != ("### Kernel memory" in md):
        failures.append(f"{len(mem)} memory cases, Kernel memory table: {'### Kernel memory' in md}")
    header = next((line for line in md.splitlines() if line.startswith("| kernel | compiles |")), "")
    columns = [h.strip() for h in header.strip("|").split("|")]
    rows = {r[0]: r for r in table_rows(md, "| kernel | compiles |")}
    for c in cold:
        name = c["name"][len("compile/cold/"):]
        r = rows.get(name)
        if r is None:
            failures.append(f"no Compile latency row for {c['name']}")
            continue
        if len(r) != len(columns):
            failures.append(f"{name}: {len(r)} cells for {len(columns)} columns")
            continue
        if c["error"]:
            if r[2] != f"error: {c['error']}":
                failures.append(f"{name}: error not shown: {r}")
            continue
        if int(r[1]) != c["samples"] or not close(parse_time(r[2]), c["generated_s"]):
            failures.append(f"{name}: compiles and time {r[1:3]} != {c['samples']}, {c['generated_s']}")
        for key, title in make_report.STAGE_TITLES.items():
            col = f"{title} (ms)"
            if key in c["extra"] and (col not in columns or not close(float(r[columns.index(col)]),
                                                                        c["extra"][key])):
                failures.append(f"{name}: {col} not {c['extra'][key]}: {r}")
        if "code_bytes" in c["extra"] and not close(parse_bytes(r[-1]), c["extra"]["code_bytes"]):
            failures.append(f"{name}: mapped {r[-1]!r} != {c['extra']['code_bytes']}")
    # Kernel memory: a row per figure, a column per case.
    rows = {r[0]: r[1:] for r in table_rows(md, "| figure |")}
    titles = {key: (title, fmt) for key, title, fmt in make_report.MEMORY_FIGURES}
    if len({t for t, _ in titles.values()}) != len(titles):
        failures.append("two Kernel memory figures have one title")
    for k, c in enumerate(mem):
        if c["error"]:
            if rows.get("compile (median)", [""] * len(mem))[k] != f"error: {c['error']}":
                failures.append(f"{c['name']}: error not shown")
            continue
        if not close(parse_time(rows["compile (median)"][k]), c["generated_s"]):
            failures.append(f"{c['name']}: compile time {rows['compile (median)'][k]!r}")
        for key, v in c["extra"].items():
            if key not in titles:
                failures.append(f"{c['name']}: figure {key} has no row")
                continue
            cell = rows.get(titles[key][0], [""] * len(mem))[k]
            if titles[key][1] is make_report.fmt_count:
                ok = cell == f"{v:.0f}"
            elif titles[key][1] is make_report.fmt_kib:
                ok = cell == f"{v / 1024:,.0f} KiB"
            elif titles[key][1] is make_report.fmt_ms:
                ok = cell != "" and close(parse_time(cell), v / 1e3)
            else:
                ok = cell != "" and close(parse_bytes(cell), v)
            if not ok:
                failures.append(f"{c['name']}: {key} shown as {cell!r}, not {v}")
        held = rows.get("the bound held", [""] * len(mem))[k]
        if "bound_bytes" in c["extra"]:
            want = "yes" if c["extra"]["max_memory_bytes"] <= c["extra"]["bound_bytes"] else "no"
            if want == "yes" and c["extra"].get("evictions") == 0:
                want = "yes (never full)"
            if held != want:
                failures.append(f"{c['name']}: the bound held {held!r}, expected {want!r}")
        elif held:
            failures.append(f"{c['name']}: no bound, but the bound held {held!r}")


def check_python(doc, md, failures):
    """The "Python overhead" table: a row per python/ case, its figures read
    back, the target beside each, met or not."""
    cases = [c for c in doc["cases"] if c["op"] == "python"]
    if not cases:
        if "## Python overhead" in md:
            failures.append("a Python overhead section without python/ cases")
        return
    if "## Python overhead" not in md:
        failures.append("no Python overhead section")
    rows = {r[0]: r for r in table_rows(md, "| case | C++ / C API |")}
    for c in cases:
        r = rows.get(c["name"])
        if r is None:
            failures.append(f"no Python overhead row for {c['name']}")
            continue
        extra = c["extra"]
        launch = "target_difference_us" in extra
        target = f"{extra['target_difference_us']:g} µs above C++" if launch else \
            f"torch.ops / C API at most {extra['target_ratio']:g}"
        if target not in r[4]:
            failures.append(f"{c['name']}: target {r[4]!r}, expected {target!r}")
        if c["error"]:
            if c["error"] not in r[3] or r[5]:
                failures.append(f"{c['name']}: error not shown: {r}")
            continue
        if not c["generated_s"]:
            if not r[3].startswith("not available") or r[5]:
                failures.append(f"{c['name']}: not shown as not available: {r}")
            continue
        if not r[1].endswith(" per launch" if launch else "s") or \
                not close(parse_time(r[1]), c["generated_s"]):
            failures.append(f"{c['name']}: C++ time {r[1]!r} != {c['generated_s']}")
        if not close(parse_time(r[2]), c["peer_s"]):
            failures.append(f"{c['name']}: Python time {r[2]!r} != {c['peer_s']}")
        if launch:
            d = extra["difference_us"]
            if not r[3].endswith(" µs") or abs(float(r[3][:-3]) - d) > 0.005 + 1e-9:
                failures.append(f"{c['name']}: difference {r[3]!r} != {d}")
            met = d <= extra["target_difference_us"]
        else:
            if abs(float(r[3]) - c["vs_peer"]) > 0.0005 + 1e-9:
                failures.append(f"{c['name']}: ratio {r[3]!r} != {c['vs_peer']}")
            met = c["vs_peer"] <= extra["target_ratio"]
        if r[5] != ("yes" if met else "no"):
            failures.append(f"{c['name']}: met {r[5]!r}, expected {'yes' if met else 'no'}")
    p = doc.get("python") or {}
    if p.get("installed") and f"tilejit {p['tilejit']} imported from the build tree" not in md:
        failures.append("the Python side's set-up is not described")
    if not p.get("installed") and p.get("note") and p["note"] not in md:
        failures.append("the page does not say why the Python side did not run")
    diffs = [c for c in cases if c.get("peer_max_abs_diff") is not None]
    if diffs and "torch.ops outputs against the C API's" not in md:
        failures.append("the torch.ops outputs' comparison is not on the page")


def canned():
    return json.load(open(os.path.join(HERE, "testdata", "canned.json"), encoding="utf-8"))


def have_matplotlib():
    try:
        import matplotlib  # noqa: F401
        return True
    except ImportError:
        return False


def maps_line(path, perms="r-xp"):
    return f"7f13fe43c000-7f13fe444000 {perms} 00124000 fe:00 14884890                   {path}"


MAPS_COMMON = [
    "55d0c0a00000-55d0c0a21000 r--p 00000000 fe:00 1234 /usr/bin/python3.11",
    maps_line("/usr/lib/x86_64-linux-gnu/libtorch_cpu.so.1.13"),
    "7ffd1c5e0000-7ffd1c601000 rw-p 00000000 00:00 0                          [stack]",
]


def test_detect_blas_openblas():
    text = "\n".join(MAPS_COMMON + [
        maps_line("/usr/lib/x86_64-linux-gnu/openblas-openmp/libopenblasp-r0.3.21.so"),
        maps_line("/usr/lib/x86_64-linux-gnu/openblas-openmp/liblapack.so.3"),
        maps_line("/usr/lib/x86_64-linux-gnu/openblas-openmp/libblas.so.3"),
        maps_line("/usr/lib/x86_64-linux-gnu/openblas-openmp/libblas.so.3", "r--p")])
    b = blas.detect_blas(text)
    assert b["optimised"] and b["name"] == "OpenBLAS (openmp)"
    assert b["path"] == "/usr/lib/x86_64-linux-gnu/openblas-openmp/libblas.so.3"
    pthread = text.replace("openblas-openmp", "openblas-pthread")
    assert blas.detect_blas(pthread)["name"] == "OpenBLAS (pthread)"


def test_detect_blas_reference():
    # The reference libblas.so.3 decides, though OpenBLAS is mapped too
    # (Debian's OpenBLAS liblapack.so.3 pulls it in): torch's gemm calls
    # resolve to the libblas.so.3 it links.
    text = "\n".join(MAPS_COMMON + [
        maps_line("/usr/lib/x86_64-linux-gnu/openblas-openmp/libopenblasp-r0.3.21.so"),
        maps_line("/usr/lib/x86_64-linux-gnu/openblas-openmp/liblapack.so.3"),
        maps_line("/usr/lib/x86_64-linux-gnu/blas/libblas.so.3.11.0")])
    b = blas.detect_blas(text)
    assert not b["optimised"]
    assert b["name"] == "reference BLAS (libblas3)"
    assert b["path"] == "/usr/lib/x86_64-linux-gnu/blas/libblas.so.3.11.0"
    assert "reference" in b["why"]


def test_detect_blas_others():
    def one(path, config=""):
        return blas.detect_blas("\n".join(MAPS_COMMON + ([maps_line(path)] if path else [])), config)
    assert one("/opt/intel/lib/libmkl_rt.so.2")["name"] == "MKL"
    assert one("/usr/lib/x86_64-linux-gnu/blis-openmp/libblas.so.3")["name"] == "BLIS"
    assert one("/usr/lib/x86_64-linux-gnu/atlas/libblas.so.3")["optimised"]
    # A libblas.so.3 from nowhere known: not a peer.
    odd = one("/opt/somewhere/libblas.so.3")
    assert not odd["optimised"] and odd["name"] == "unidentified BLAS"
    # Nothing mapped: torch's own report decides.
    assert one(None, "BLAS_INFO=mkl, USE_MKLDNN=ON")["name"].startswith("MKL")
    assert one(None, "BLAS_INFO=generic, USE_MKLDNN=ON") == {
        "name": "oneDNN only", "path": None, "optimised": True,
        "why": "no BLAS library is mapped; torch reports oneDNN (USE_MKLDNN=ON)"}
    assert not one(None, "BLAS_INFO=generic, USE_MKLDNN=OFF")["optimised"]


def reference_blas_doc():
    """The document of a run whose peer loaded the reference BLAS, as the
    driver writes it: installed false, the BLAS and why, no peer ratios."""
    doc = copy.deepcopy(canned())
    path = "/usr/lib/x86_64-linux-gnu/blas/libblas.so.3.11.0"
    doc["peer"] = {
        "installed": False, "no_peer": "reference BLAS", "torch": "1.13.1", "threads": 2,
        "blas": "reference BLAS (libblas3)", "blas_path": path, "blas_optimised": False,
        "blas_why": "the reference implementation (Netlib), not a peer a user would run",
        "note": "no peer (reference BLAS): PyTorch's process loaded reference BLAS (libblas3) "
                f"({path}), the reference implementation (Netlib), not a peer a user would run"}
    for c in doc["cases"]:
        if c["op"] != "python":
            c["peer_s"] = c["vs_peer"] = c["peer_max_abs_diff"] = None
    return doc


def test_reference_blas_is_no_peer():
    if not have_matplotlib():
        import pytest
        pytest.skip("matplotlib is not installed")
    failures = []
    with tempfile.TemporaryDirectory() as out:
        md = check(reference_blas_doc(), out, failures)
    assert not failures, failures
    section = md[md.index("## Peer"):]
    section = section[:section.index("\n## ")]
    assert "no peer (reference BLAS)" in section
    assert "`reference BLAS (libblas3)`" in section
    assert "libblas.so.3.11.0" in section


def test_installed_peer_names_its_blas():
    if not have_matplotlib():
        import pytest
        pytest.skip("matplotlib is not installed")
    doc = copy.deepcopy(canned())
    doc["peer"].update(blas="OpenBLAS (openmp)",
                       blas_path="/usr/lib/x86_64-linux-gnu/openblas-openmp/libblas.so.3")
    failures = []
    with tempfile.TemporaryDirectory() as out:
        md = check(doc, out, failures)
    assert not failures, failures
    assert "BLAS `OpenBLAS (openmp)` (/usr/lib/x86_64-linux-gnu/openblas-openmp/libblas.so.3" in md


def scaling_doc():
    return json.load(open(os.path.join(HERE, "testdata", "scaling.json"), encoding="utf-8"))


def test_thread_scaling_table():
    doc = scaling_doc()
    md = make_report.scaling_section(doc)
    assert md.startswith("## Thread scaling")
    header = "| case | of bound, 1 thread | GB/s, 1 thread | of bound, 2 threads | GB/s, 2 threads | " \
             "of bound, 4 threads | GB/s, 4 threads |"
    assert header in md
    rows = {r[0]: r[1:] for r in table_rows(md, "| case | of bound, 1 thread |")}
    names = list(dict.fromkeys(c["name"] for e in doc["scaling"] for c in e["cases"]))
    assert list(rows) == names
    for k, entry in enumerate(doc["scaling"]):
        cases = {c["name"]: c for c in entry["cases"]}
        for name in names:
            of, gbs = rows[name][2 * k], rows[name][2 * k + 1]
            c = cases.get(name)
            if c is None:
                assert (of, gbs) == ("", ""), (name, entry["threads"])
            elif c["error"]:
                assert of == f"error: {c['error']}" and gbs == ""
            else:
                assert abs(float(of) - c["of_bound"]) <= 0.005 + 1e-9, (name, of)
                assert close(float(gbs), c["GBs"], 4), (name, gbs)
    # The limits at each count, read back.
    lrows = {r[0]: r[1:] for r in table_rows(md, "| working set | read, 1 thread |")}
    for k, entry in enumerate(doc["scaling"]):
        for b in entry["limits"]["bandwidth"]:
            r = lrows[make_report.fmt_bytes(b["bytes"])]
            assert close(float(r[2 * k]), b["read_GBs"], 4)
            assert close(float(r[2 * k + 1]), b["copy_GBs"], 4)


def test_thread_scaling_needs_two_counts():
    doc = scaling_doc()
    assert make_report.scaling_section({}) == ""
    assert make_report.scaling_section({"scaling": doc["scaling"][:1]}) == ""
    # The counts in ascending order whatever the document's order.
    doc["scaling"].reverse()
    md = make_report.scaling_section(doc)
    assert md.index("of bound, 1 thread") < md.index("of bound, 2 threads") < \
        md.index("of bound, 4 threads")


def test_thread_scaling_on_the_page():
    if not have_matplotlib():
        import pytest
        pytest.skip("matplotlib is not installed")
    doc = copy.deepcopy(canned())
    doc["scaling"] = scaling_doc()["scaling"]
    failures = []
    with tempfile.TemporaryDirectory() as out:
        md = check(doc, out, failures)
        assert not failures, failures
        assert make_report.scaling_section(doc) in md
        del doc["scaling"]
        md = check(doc, out, failures)
        assert not failures, failures
        assert "## Thread scaling" not in md


def test_compile_tables():
    if not have_matplotlib():
        import pytest
        pytest.skip("matplotlib is not installed")
    doc = canned()
    failures = []
    with tempfile.TemporaryDirectory() as out:
        md = check(doc, out, failures)
    assert not failures, failures
    section = md[md.index("### Compile latency"):md.index("## Python overhead")]
    # Stages in pipeline order, no link column (no case has one).
    assert "| kernel | compiles | time | parse (ms) | sema (ms) | Tile IR passes (ms) | codegen (ms) | " \
           "LLVM opt (ms) | machine code (ms) | mapped |" in section
    assert section.index("### Compile latency") < section.index("### Kernel memory") < \
        section.index("-compile.png")
    assert "| the bound held |  | yes |" in section


def test_compile_tables_bound_exceeded():
    doc = copy.deepcopy(canned())
    for c in doc["cases"]:
        if c["name"].startswith("compile/memory/bound-"):
            c["extra"]["max_memory_bytes"] = c["extra"]["bound_bytes"] + 4096
    cases = [c for c in doc["cases"] if c["op"] == "compile"]
    md = make_report.kernel_memory_section(cases)
    assert "| the most the tier held |  | 16,388 KiB |" in md
    assert "| the bound held |  | no |" in md


def test_compile_tables_bound_never_reached():
    """A --quick stream stays below the bound: no evictions, no figures from
    the first eviction on, and the bound held only because it was never
    reached."""
    if not have_matplotlib():
        import pytest
        pytest.skip("matplotlib is not installed")
    doc = copy.deepcopy(canned())
    for c in doc["cases"]:
        if c["name"].startswith("compile/memory/bound-"):
            e = c["extra"]
            for key in ("request_after_full_ms", "compile_after_full_ms", "evict_one_ms",
                        "kernels_after_full", "heap_growth_after_full_bytes",
                        "rss_growth_after_full_bytes"):
                del e[key]
            e.update(kernels=100, max_memory_bytes=819200, final_memory_bytes=819200,
                     final_entries=100, final_mapped_bytes=819200, evictions=0)
    failures = []
    with tempfile.TemporaryDirectory() as out:
        md = check(doc, out, failures)
    assert not failures, failures
    assert "| the bound held |  | yes (never full) |" in md
    assert "one eviction from the full tier" not in md


def test_compile_tables_older_document():
    """A document of a run before the per-kernel cases: one cold compile with
    a link stage and no mapped bytes, no memory cases."""
    doc = copy.deepcopy(canned())
    doc["cases"] = [c for c in doc["cases"] if not c["name"].startswith("compile/") or
                    c["name"].startswith("compile/cold/flash-attention-fwd/")]
    old = next(c for c in doc["cases"] if c["op"] == "compile")
    del old["extra"]["code_bytes"]
    old["extra"]["link_ms"] = 9.75
    cases = [c for c in doc["cases"] if c["op"] == "compile"]
    md = make_report.compile_latency_section(cases)
    assert "| machine code (ms) | link (ms) | mapped |" in md
    assert "| flash-attention-fwd/f16-D128-G4-causal | 3 | 412 ms | 1.5 | 2.25 | 8 | 20.5 | 250 | 120 | " \
           "9.75 |  |" in md
    assert make_report.kernel_memory_section(cases) == ""
    if have_matplotlib():
        failures = []
        with tempfile.TemporaryDirectory() as out:
            page = check(doc, out, failures)
        assert not failures, failures
        assert "### Kernel memory" not in page
    # No compile cases at all: neither table.
    assert make_report.compile_latency_section([]) == ""
    assert make_report.kernel_memory_section([]) == ""


def main():
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        print("matplotlib is not installed (Debian: python3-matplotlib)")
        return 77
    doc = canned()
    failures = []
    with tempfile.TemporaryDirectory() as out:
        md = check(doc, out, failures)
        if "PyTorch 1.13.1 on 2 threads" not in md or "libopenblas" not in md:
            failures.append("the peer's set-up is not described")
    # Without a peer: the page says so, and the peer columns are empty.
    nopeer = copy.deepcopy(doc)
    nopeer["peer"] = {"installed": False, "note": "peer not installed: torch does not import"}
    for c in nopeer["cases"]:
        if c["op"] != "python":  # the Python side is not the PyTorch peer
            c["peer_s"] = c["vs_peer"] = None
    with tempfile.TemporaryDirectory() as out:
        md = check(nopeer, out, failures)
        if "peer not installed" not in md:
            failures.append("no 'peer not installed' on a page without a peer")
    # Without the Python side: every python/ case not available, the page
    # says why.
    nopython = copy.deepcopy(doc)
    nopython["python"] = {"installed": False,
                          "note": "tilejit's Python package is not built in this build"}
    for c in nopython["cases"]:
        if c["op"] == "python":
            c.update(generated_s=None, peer_s=None, vs_peer=None, peer_max_abs_diff=None,
                     error=None, note="not available: " + nopython["python"]["note"])
            c["extra"].pop("difference_us", None)
    with tempfile.TemporaryDirectory() as out:
        check(nopython, out, failures)
    # A document of a run without python/ cases (as before them): no section.
    before = copy.deepcopy(doc)
    del before["python"]
    before["cases"] = [c for c in before["cases"] if c["op"] != "python"]
    with tempfile.TemporaryDirectory() as out:
        check(before, out, failures)
    # The pytest functions, for the ctest run.
    for name, test in sorted(globals().items()):
        if name.startswith("test_") and callable(test):
            try:
                test()
            except AssertionError as e:
                failures.append(f"{name}: {e}")
    for f in failures:
        print("FAIL:", f)
    print(f"{len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
