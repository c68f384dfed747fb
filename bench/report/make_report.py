#!/usr/bin/env python3
"""Turns the JSON document of `tilejit bench` into a Markdown report with plots.

    make_report.py RESULTS.json OUTDIR

writes OUTDIR/<host>-<commit>.md and, beside it, PNG and SVG plots:
<stem>-roofline (every kernel against the machine's limits measured in the
run), <stem>-<op> (generated vs hand-written vs peer times per operator) and
<stem>-compile (each cold compile's stages as shares of its time). Prints
the summary table (one line per operator's headline case) on stdout, for
the README. The compile section has two tables of its own: "Compile
latency" (a row per cold-compile case, `compile/cold/...`, a column per
stage) and "Kernel memory" (the `compile/memory/...` cases' figures: bytes
per cached kernel, the in-memory tier's bound and what it held). The python/
cases (tilejit's Python package against the C++ API and the C API) have a
table of their own, "Python overhead", with the target beside each figure.
A run at several thread counts (`tilejit bench --threads 1,2,all`: the
document's `scaling`) has a "Thread scaling" table: each memory-bound case's
fraction of its roofline bound and GB/s at each count, and the limits
measured at each.

Every figure is taken from the document; nothing is measured here. A column
is empty where the document has no value (no twin, no peer, a decode-sized
call, which has no roofline fraction).
"""
import json
import os
import sys

OP_TITLES = {
    "ifa": "IncreFlashAttentionV4 (decode attention)",
    "nsa": "NsaCompressWithCache",
    "scatter": "ScatterPaKvCache",
    "gather": "GatherPaKvCache",
    "fag": "FlashAttentionUnpaddingScoreGradV5 (attention backward)",
    "compile": "Compile latency and fixed costs",
    "python": "Python overhead",
}
# Operators whose cases have the generic table and a plot (the python/ cases
# have a table of their own).
PYTHON_OP = "python"


def fmt_time(s):
    """Seconds in the unit that keeps 3 significant digits."""
    if s is None:
        return ""
    if s >= 1:
        return f"{s:.3g} s"
    if s >= 1e-3:
        return f"{s * 1e3:.3g} ms"
    if s >= 1e-6:
        return f"{s * 1e6:.3g} µs"
    return f"{s * 1e9:.3g} ns"


def fmt_bytes(b):
    if not b:
        return ""
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if b >= scale:
            return f"{b / scale:.3g} {unit}"
    return f"{b:.0f} B"


def fmt_num(v, digits=3):
    return "" if v is None else f"{v:.{digits}g}"


def fmt_ratio(v):
    return "" if v is None else f"{v:.2f}"


def rate(c):
    """Throughput of a case as text: GFLOP/s for compute-bound cases, GB/s
    for memory-bound ones, calls/s for latency and compile cases."""
    if c["bound"] == "compute" and c.get("GFLOPs"):
        return f"{c['GFLOPs']:.4g} GFLOP/s"
    if c["bound"] in ("read", "copy") and c.get("GBs"):
        return f"{c['GBs']:.4g} GB/s"
    if c["bound"] == "latency" and c.get("calls_per_s"):
        return f"{c['calls_per_s']:.4g} calls/s"
    return ""


def limit_text(c):
    """The limit the roofline fraction is against."""
    if c["bound"] == "compute":
        return f"{c['peak_name']} {fmt_num(c.get('peak_GFLOPs'), 4)} GFLOP/s"
    if c["bound"] == "copy":
        return f"copy {fmt_num(c.get('copy_GBs'), 4)} GB/s"
    if c["bound"] == "read":
        bw = c.get("read_GBs")
        where = "warm read" if c.get("in_cache") else "read"
        return f"{where} {fmt_num(bw, 4)} GB/s"
    return ""


def peer_cell(c, doc):
    if c.get("vs_peer") is not None:
        return fmt_ratio(c["vs_peer"])
    return ""


CASE_HEADER = (
    "| case | working set | time | throughput | limit | of roofline bound | "
    "twin / generated | peer / generated |\n"
    "|---|---|---|---|---|---|---|---|\n"
)


def case_row(c, doc):
    name = c["name"]
    if c.get("in_cache"):
        name += " (in cache)"
    if c.get("error"):
        return f"| {name} | | error: {c['error']} | | | | | |\n"
    time = fmt_time(c.get("generated_s"))
    if c["bound"] == "latency":
        time += " per call"
    return (
        f"| {name} | {fmt_bytes(c.get('working_set_bytes'))} | {time} | {rate(c)} | "
        f"{limit_text(c)} | {fmt_ratio(c.get('of_bound'))} | "
        f"{fmt_ratio(c.get('vs_handwritten'))} | {peer_cell(c, doc)} |\n"
    )


def headline(cases):
    """The first case of an operator that ran (registration order puts the
    headline first)."""
    for c in cases:
        if not c.get("error") and c.get("generated_s"):
            return c
    return None


SUMMARY_HEADER = (
    "| operator | headline case | time | throughput | of roofline bound | "
    "twin / generated | peer / generated |\n"
    "|---|---|---|---|---|---|---|\n"
)


def summary(doc, by_op):
    out = SUMMARY_HEADER
    for op, cases in by_op.items():
        if op == PYTHON_OP:
            continue
        c = headline(cases)
        if c is None:
            continue
        out += (
            f"| {op} | {c['name']} | {fmt_time(c.get('generated_s'))} | {rate(c)} | "
            f"{fmt_ratio(c.get('of_bound'))} | {fmt_ratio(c.get('vs_handwritten'))} | "
            f"{fmt_ratio(c.get('vs_peer'))} |\n"
        )
    return out


def group(doc):
    by_op = {}
    for c in doc["cases"]:
        by_op.setdefault(c["op"], []).append(c)
    return by_op


STAGES = ["parse_ms", "sema_ms", "tile_passes_ms", "codegen_ms", "llvm_opt_ms", "machine_code_ms", "link_ms"]


STAGE_TITLES = {
    "parse_ms": "parse", "sema_ms": "sema", "tile_passes_ms": "Tile IR passes",
    "codegen_ms": "codegen", "llvm_opt_ms": "LLVM opt", "machine_code_ms": "machine code",
    "link_ms": "link",
}
# The compile cases with tables of their own, by the start of their names.
COLD_PREFIX = "compile/cold/"
MEMORY_PREFIX = "compile/memory/"


def stage_items(extra):
    """The compile stages of `extra` in pipeline order (JSON objects come
    back sorted by name), then any other figures."""
    known = [(k, extra[k]) for k in STAGES if k in extra]
    return known + [(k, v) for k, v in extra.items() if k not in STAGES and k.endswith("_ms")]


def cold_cases(cases):
    return [c for c in cases if c["name"].startswith(COLD_PREFIX)]


def memory_cases(cases):
    return [c for c in cases if c["name"].startswith(MEMORY_PREFIX)]


def compile_latency_section(cases):
    """The cold compiles: a row per case, its time and each stage's median
    (ms), and the code and data its kernel maps."""
    cold = cold_cases(cases)
    if not cold:
        return ""
    stages = [k for k in STAGES if any(k in (c.get("extra") or {}) for c in cold)]
    out = "### Compile latency\n\n"
    out += (
        "Each kernel compiled from nothing (the in-memory tier emptied, no disk tier): the median "
        "over the compiles of the whole request and of each stage (ms; the stages' medians need "
        "not add up to the request's); machine code includes the link into the JIT. Mapped: the "
        "pages of code and data the kernel keeps mapped.\n\n"
    )
    out += "| kernel | compiles | time | " + " | ".join(f"{STAGE_TITLES.get(k, k[:-3])} (ms)" for k in stages)
    out += " | mapped |\n|---|---|---|" + "---|" * len(stages) + "---|\n"
    for c in cold:
        name = c["name"][len(COLD_PREFIX):]
        if c.get("error"):
            out += f"| {name} | | error: {c['error']} |" + " |" * len(stages) + " |\n"
            continue
        extra = c.get("extra") or {}
        cells = [fmt_num(extra.get(k)) for k in stages]
        out += (f"| {name} | {c.get('samples') or ''} | {fmt_time(c.get('generated_s'))} | "
                + " | ".join(cells) + f" | {fmt_bytes(extra.get('code_bytes'))} |\n")
    return out + "\n"


def fmt_count(v):
    return "" if v is None else f"{v:.0f}"


def fmt_signed_bytes(b):
    """Bytes that may be negative or zero (a growth)."""
    if b is None:
        return ""
    if b == 0:
        return "0 B"
    return ("-" if b < 0 else "") + fmt_bytes(abs(b))


def fmt_kib(b):
    """Bytes in whole KiB with separators: a tier's bytes beside its bound,
    where three digits would show both as the same MiB."""
    return "" if b is None else f"{b / 1024:,.0f} KiB"


def fmt_ms(v):
    return "" if v is None else fmt_time(v / 1e3)


# The memory cases' figures, in the table's order: (key, what it is, format).
MEMORY_FIGURES = [
    ("kernels", "kernels compiled", fmt_count),
    ("request_before_full_ms", "median request before the tier was full", fmt_ms),
    ("compile_before_full_ms", "median compile before it was full (the pipeline alone)", fmt_ms),
    ("request_after_full_ms", "median request once it was full (each evicts)", fmt_ms),
    ("compile_after_full_ms", "median compile once it was full (the pipeline alone)", fmt_ms),
    ("evict_one_ms", "one eviction from the full tier", fmt_ms),
    ("code_bytes_per_kernel", "code and data each kernel maps (mean)", fmt_bytes),
    ("mapped_bytes_per_kernel", "growth of all kernels' mapped bytes, per kernel", fmt_signed_bytes),
    ("heap_bytes_per_kernel", "growth of the heap in use, per kernel", fmt_signed_bytes),
    ("rss_bytes_per_kernel", "growth of the resident set, per kernel", fmt_signed_bytes),
    ("bound_bytes", "the tier's bound", fmt_kib),
    ("max_memory_bytes", "the most the tier held", fmt_kib),
    ("final_memory_bytes", "the tier at the end", fmt_kib),
    ("final_entries", "kernels in the tier at the end", fmt_count),
    ("final_mapped_bytes", "all kernels' mapped bytes at the end", fmt_kib),
    ("evictions", "evictions", fmt_count),
    ("kernels_after_full", "requests from the first eviction on", fmt_count),
    ("heap_growth_bytes", "growth of the heap in use over the stream", fmt_signed_bytes),
    ("heap_growth_second_half_bytes", "growth of the heap in use over the second half", fmt_signed_bytes),
    ("heap_growth_after_full_bytes", "growth of the heap in use from the first eviction on", fmt_signed_bytes),
    ("rss_growth_bytes", "growth of the resident set over the stream", fmt_signed_bytes),
    ("rss_growth_second_half_bytes", "growth of the resident set over the second half", fmt_signed_bytes),
    ("rss_growth_after_full_bytes", "growth of the resident set from the first eviction on", fmt_signed_bytes),
]


def bound_held(extra):
    """"yes" or "no" where the case has a bound and the most held ("yes
    (never full)" where nothing was evicted: a stream too short to test
    it), else ""."""
    if "bound_bytes" not in extra or "max_memory_bytes" not in extra:
        return ""
    if extra["max_memory_bytes"] > extra["bound_bytes"]:
        return "no"
    return "yes (never full)" if extra.get("evictions") == 0 else "yes"


def kernel_memory_section(cases):
    """The memory cases: a row per figure, a column per case (empty where a
    case has no such figure)."""
    mem = memory_cases(cases)
    if not mem:
        return ""
    out = "### Kernel memory\n\n"
    out += (
        "Distinct specialisations of a trivial kernel compiled one after another, no disk tier: "
        "what each cached kernel keeps, and the in-memory tier under a bound "
        "(`Compiler::setMemoryCacheMaxBytes`; it counts each kernel's code and data pages), least "
        "recently used out. Mapped bytes are the pages of code and data of every kernel alive; "
        "the heap in use is what malloc has handed out and not had back (mallinfo2); the "
        "resident set is the process's (VmRSS).\n\n"
    )
    extras = [c.get("extra") or {} for c in mem]
    out += "| figure | " + " | ".join(c["name"][len(MEMORY_PREFIX):] for c in mem) + " |\n"
    out += "|---|" + "---|" * len(mem) + "\n"
    out += "| compile (median) | " + " | ".join(
        f"error: {c['error']}" if c.get("error") else fmt_time(c.get("generated_s")) for c in mem) + " |\n"
    for key, title, fmt in MEMORY_FIGURES:
        if any(key in e for e in extras):
            out += f"| {title} | " + " | ".join(fmt(e.get(key)) for e in extras) + " |\n"
    if any(bound_held(e) for e in extras):
        out += "| the bound held | " + " | ".join(bound_held(e) for e in extras) + " |\n"
    return out + "\n"


def save(fig, outdir, name):
    paths = []
    for ext in ("png", "svg"):
        p = os.path.join(outdir, f"{name}.{ext}")
        # No date and fixed ids: the same document gives the same files.
        meta = {"Date": None} if ext == "svg" else {}
        fig.savefig(p, dpi=110, bbox_inches="tight", metadata=meta)
        paths.append(p)
    return paths


def plots(doc, by_op, outdir, stem):
    """The plots; returns {kind: file name of the PNG} ({} without
    matplotlib)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        matplotlib.rcParams["svg.hashsalt"] = "tilejit"
        import matplotlib.pyplot as plt
    except ImportError:
        return {}
    made = {}
    limits = doc["limits"]
    markers = {"ifa": "o", "nsa": "s", "scatter": "^", "gather": "v", "fag": "D"}

    # Roofline: every case with bytes and a time, at its arithmetic
    # intensity (FLOPs per byte; copies, which do no arithmetic, at the left
    # edge), against the memory roof (the median over the cases of the read
    # bandwidth at their working-set sizes) and the compute roofs.
    fig, ax = plt.subplots(figsize=(9, 6))
    points = [
        c
        for c in doc["cases"]
        if c.get("generated_s") and c.get("bytes") and c["bound"] in ("read", "copy", "compute")
    ]
    if points:
        intensities = [max(c["flops"] / c["bytes"], 1e-3) for c in points]
        lo, hi = min(intensities) / 2, max(max(intensities) * 4, 100)
        reads = [c.get("read_GBs") for c in points if not c.get("in_cache") and c["bound"] == "read"]
        reads = [r for r in reads if r]
        mem = sorted(reads)[len(reads) // 2] if reads else None
        roofs = [("f32 FMA", limits.get("fma_GFLOPs")), ("vdpbf16ps", limits.get("bf16_dot_GFLOPs")),
                 ("AMX bf16", limits.get("amx_bf16_GFLOPs"))]
        xs = [lo * (hi / lo) ** (i / 200) for i in range(201)]
        for label, peak in roofs:
            if peak and mem:
                ax.plot(xs, [min(peak, x * mem) for x in xs], lw=1.2, label=f"roof: {label} {peak:.0f} GFLOP/s, memory {mem:.1f} GB/s")
        colors = {"ifa": "tab:blue", "nsa": "tab:orange", "scatter": "tab:green",
                  "gather": "tab:red", "fag": "tab:purple"}
        heads = {headline(cases)["name"] for cases in by_op.values() if headline(cases)}
        labelled = set()
        for c, x in zip(points, intensities):
            # Copies: achieved bytes/s at the edge, as GB/s x intensity.
            y = c["flops"] / c["generated_s"] / 1e9 if c["flops"] else x * c["bytes"] / c["generated_s"] / 1e9
            color = colors.get(c["op"], "tab:gray")
            ax.scatter([x], [y], marker=markers.get(c["op"], "o"), s=40, edgecolors=color,
                       facecolors="none" if c.get("in_cache") else color,
                       label=None if c["op"] in labelled else OP_TITLES.get(c["op"], c["op"]))
            labelled.add(c["op"])
            if c["name"] in heads:
                ax.annotate(c["name"], (x, y), fontsize=6, xytext=(4, -9), textcoords="offset points")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("arithmetic intensity (FLOP / byte; copies at the left edge)")
        ax.set_ylabel("GFLOP/s (copies: GB/s x intensity)")
        ax.set_title(f"Roofline: {doc['host']['name']} @ {doc['commit']}, {limits['threads']} threads "
                     "(hollow: in cache)")
        ax.legend(fontsize=7, loc="lower right")
        ax.grid(True, which="both", alpha=0.3)
    save(fig, outdir, f"{stem}-roofline")
    plt.close(fig)
    made["roofline"] = f"{stem}-roofline.png"

    # Generated vs hand-written vs peer, per operator (time, log scale).
    for op, cases in by_op.items():
        if op in ("compile", PYTHON_OP):
            continue
        timed = [c for c in cases if c.get("generated_s")]
        if not timed:
            continue
        fig, ax = plt.subplots(figsize=(9, 0.45 * len(timed) + 1.5))
        names = [c["name"].split("/", 1)[1] for c in timed]
        ys = range(len(timed))
        h = 0.27
        for k, (key, label) in enumerate(
            (("generated_s", "generated"), ("handwritten_s", "hand-written"), ("peer_s", "PyTorch peer"))
        ):
            vals = [(c.get(key) or 0) * 1e3 for c in timed]
            if any(vals):
                ax.barh([y + (k - 1) * h for y in ys], vals, height=h, label=label)
        ax.set_yticks(list(ys))
        ax.set_yticklabels(names, fontsize=7)
        ax.invert_yaxis()
        ax.set_xscale("log")
        ax.set_xlabel("ms per call (median; lower is better)")
        ax.set_title(OP_TITLES.get(op, op))
        ax.legend(fontsize=7)
        ax.grid(True, axis="x", which="both", alpha=0.3)
        save(fig, outdir, f"{stem}-{op}")
        plt.close(fig)
        made[op] = f"{stem}-{op}.png"

    # Compile latency per stage: each cold compile's stages as shares of its
    # time (kernels differ by orders of magnitude), its time beside it.
    cold = [c for c in cold_cases(by_op.get("compile", [])) if c.get("extra") and c.get("generated_s")]
    if not cold:
        # A document of older runs: the first compile case with stages.
        cold = [c for c in by_op.get("compile", []) if c.get("extra") and c.get("generated_s")][:1]
    if cold:
        stages = [k for k in STAGES if any(k in c["extra"] for c in cold)]
        fig, ax = plt.subplots(figsize=(9, 0.4 * len(cold) + 1.6))
        ys = list(range(len(cold)))
        left = [0.0] * len(cold)
        for k in stages:
            shares = [100 * c["extra"].get(k, 0) / (c["generated_s"] * 1e3) for c in cold]
            ax.barh(ys, shares, left=left, label=STAGE_TITLES.get(k, k[:-3]))
            left = [a + b for a, b in zip(left, shares)]
        for y, c in zip(ys, cold):
            ax.annotate(fmt_time(c["generated_s"]), (max(left[y], 100), y), fontsize=7,
                        xytext=(4, -3), textcoords="offset points")
        ax.set_yticks(ys)
        ax.set_yticklabels([c["name"][len(COLD_PREFIX):] if c["name"].startswith(COLD_PREFIX)
                            else c["name"] for c in cold], fontsize=7)
        ax.invert_yaxis()
        ax.set_xlim(0, 118)
        ax.set_xlabel("% of the cold compile (median of each stage over the median time)")
        ax.set_title("Cold compile by stage")
        ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5))
        save(fig, outdir, f"{stem}-compile")
        plt.close(fig)
        made["compile"] = f"{stem}-compile.png"
    return made


def host_section(doc):
    h, l = doc["host"], doc["limits"]
    out = "## Host and limits\n\n"
    out += f"- host `{h['name']}`: {h['cpu']}, {h['cores']} cores online, {h['threads']} threads used, "
    out += f"last-level cache {fmt_bytes(h['llc_bytes'])}, {fmt_bytes(h['memory_bytes'])} memory, {h['kernel']}\n"
    out += f"- CPU flags: {', '.join(h['flags'])}\n"
    out += f"- OpenMP wait policy (both tilejit and the peer): {h.get('omp_wait_policy', 'default')}\n"
    out += f"- commit `{doc['commit']}` (tilejit {doc['version']}), run {doc['date']}, "
    out += f"{doc['duration_s']:.0f} s in all"
    if doc["options"]["quick"]:
        out += " (--quick: few samples)"
    out += "\n"
    ls, le = doc.get("load_average_start"), doc.get("load_average_end")
    if ls and le:
        out += f"- load average (1, 5, 15 min) at the start {ls[0]:.2f} {ls[1]:.2f} {ls[2]:.2f}, "
        out += f"at the end {le[0]:.2f} {le[1]:.2f} {le[2]:.2f}\n"
    out += f"- {doc['options']['samples']} alternating samples per case; the cache flushed before "
    out += f"every timed call by a read of {fmt_bytes(l['flush_bytes'])} (cases in cache excepted)\n\n"
    out += "| limit | value |\n|---|---|\n"
    out += f"| f32 FMA peak ({l['threads']} threads) | {fmt_num(l['fma_GFLOPs'], 4)} GFLOP/s |\n"
    out += f"| bf16 dot peak, vdpbf16ps | {fmt_num(l.get('bf16_dot_GFLOPs'), 4) or 'none on this host'} "
    out += "GFLOP/s |\n" if l.get("bf16_dot_GFLOPs") else "|\n"
    out += f"| bf16 AMX peak, tdpbf16ps | {fmt_num(l.get('amx_bf16_GFLOPs'), 4) or 'none on this host'} "
    out += "GFLOP/s |\n" if l.get("amx_bf16_GFLOPs") else "|\n"
    if not l["bandwidth"]:
        return out + "\n"
    # Each bandwidth is the best pass over several probes (streams per
    # thread, prefetch, store kind); the probe that gave it is named.
    out += (
        "\nBandwidth at each working-set size: the best pass of several probes (one or more "
        "independent streams per thread, software prefetch or none, regular or non-temporal "
        "stores, memcpy), each pass from memory after a flush except the warm read; a copy "
        "counts the bytes read plus those written, as the cases do. The probe that gave each "
        "limit in parentheses.\n\n"
        "| working set | read from memory | copy from memory | warm read |\n|---|---|---|---|\n"
    )

    def cell(b, key, probe):
        text = f"{b[key]:.4g} GB/s"
        return text + (f" ({b[probe]})" if b.get(probe) else "")

    for b in l["bandwidth"]:
        out += (
            f"| {fmt_bytes(b['bytes'])} | {cell(b, 'read_GBs', 'read_probe')} | "
            f"{cell(b, 'copy_GBs', 'copy_probe')} | {cell(b, 'warm_read_GBs', 'warm_read_probe')} |\n"
        )
    return out + "\n"


def peer_section(doc):
    p = doc["peer"]
    out = "## Peer\n\n"
    if not p.get("installed"):
        out += f"{p.get('note', 'peer not installed')}.\n\n"
        if p.get("no_peer"):
            out += (f"PyTorch {p.get('torch')} started, but its BLAS is `{p.get('blas')}`: "
                    f"no peer ({p['no_peer']}); no case has a peer / generated ratio.\n\n")
        return out
    out += f"PyTorch {p['torch']} on {p['threads']} threads (tilejit's count), CPU capability "
    out += f"{p.get('cpu_capability')}, oneDNN {'on' if p.get('mkldnn') else 'off'}, BLAS `{p['blas']}`"
    if p.get("blas_path"):
        out += f" ({p['blas_path']}, the library loaded in the peer's process)"
    out += ". "
    settings = ", ".join(f"{k}={v}" for k, v in p.get("settings", {}).items())
    out += f"Environment: {settings}. "
    out += (
        "The peer runs in its own process on the same inputs (written to files, loaded once), "
        "timed alternately with tilejit, the cache flushed before each of its calls too; "
        "each case's table line says what it computes.\n\n"
    )
    return out


def threads_text(n):
    return f"{n} thread" if n == 1 else f"{n} threads"


def scaling_section(doc):
    """The memory-bound cases' roofline fractions and GB/s at each thread count of the
    run (`tilejit bench --threads`), each against the limits measured at that count;
    nothing where the run had one count."""
    entries = sorted(doc.get("scaling") or [], key=lambda e: e["threads"])
    if len(entries) < 2:
        return ""
    counts = [e["threads"] for e in entries]
    out = "## Thread scaling\n\n"
    out += (
        f"The memory-bound cases (bound read or copy) at {', '.join(map(str, counts))} threads "
        "(`--threads`), OpenMP's thread count set for the kernels, the hand-written twins and "
        "the probes alike; each fraction is of the roofline bound with the limits measured at "
        "that count (below). The peer is not run at the other counts.\n\n"
    )
    out += "| case | " + " | ".join(
        f"of bound, {threads_text(n)} | GB/s, {threads_text(n)}" for n in counts) + " |\n"
    out += "|---|" + "---|---|" * len(counts) + "\n"
    names = list(dict.fromkeys(c["name"] for e in entries for c in e["cases"]))
    by_count = [{c["name"]: c for c in e["cases"]} for e in entries]
    for name in names:
        cells = []
        for cases in by_count:
            c = cases.get(name)
            if c is None:
                cells += ["", ""]
            elif c.get("error"):
                cells += [f"error: {c['error']}", ""]
            else:
                gbs = c.get("GBs")
                cells += [fmt_ratio(c.get("of_bound")), f"{gbs:.4g}" if gbs else ""]
        out += f"| {name} | " + " | ".join(cells) + " |\n"
    out += (
        "\nThe limits at each count: read and copy bandwidth from memory (GB/s) at each "
        "working-set size, the best of the probes at that count.\n\n"
    )
    out += "| working set | " + " | ".join(
        f"read, {threads_text(n)} | copy, {threads_text(n)}" for n in counts) + " |\n"
    out += "|---|" + "---|---|" * len(counts) + "\n"
    sizes = sorted({b["bytes"] for e in entries for b in e["limits"]["bandwidth"]})
    tables = [{b["bytes"]: b for b in e["limits"]["bandwidth"]} for e in entries]
    for size in sizes:
        cells = []
        for table in tables:
            b = table.get(size)
            cells += [f"{b['read_GBs']:.4g}", f"{b['copy_GBs']:.4g}"] if b else ["", ""]
        out += f"| {fmt_bytes(size)} | " + " | ".join(cells) + " |\n"
    return out + "\n"


PYTHON_HEADER = (
    "| case | C++ / C API | Python | figure | target | met |\n"
    "|---|---|---|---|---|---|\n"
)


def python_figure(c):
    """(figure, target, met) of a python/ case: the launch's difference of
    the medians in µs, or the median ratio torch.ops / C API."""
    extra = c.get("extra") or {}
    if "target_difference_us" in extra:
        target = extra["target_difference_us"]
        d = extra.get("difference_us")
        text = f"at most {target:g} µs above C++"
        if d is None:
            return "", text, ""
        return f"{d:+.2f} µs", text, "yes" if d <= target else "no"
    target = extra.get("target_ratio")
    text = f"torch.ops / C API at most {target:g}" if target else ""
    r = c.get("vs_peer")
    if r is None:
        return "", text, ""
    return f"{r:.3f}", text, ("yes" if r <= target else "no") if target else ""


def python_row(c):
    figure, target, met = python_figure(c)
    name = c["name"]
    if c.get("error"):
        return f"| {name} | | | error: {c['error']} | {target} | |\n"
    if not c.get("generated_s"):
        return f"| {name} | | | {c.get('note') or 'not measured'} | {target} | |\n"
    launch = "target_difference_us" in (c.get("extra") or {})
    per = " per launch" if launch else ""
    return (
        f"| {name} | {fmt_time(c.get('generated_s'))}{per} | "
        f"{fmt_time(c.get('peer_s'))}{' per call' if launch else ''} | {figure} | {target} | {met} |\n"
    )


def python_section(doc, cases):
    """The python/ cases: tilejit's Python package against C++ and the C API."""
    out = f"## {OP_TITLES[PYTHON_OP]}\n\n"
    p = doc.get("python") or {}
    if p.get("installed"):
        out += (
            f"tilejit {p.get('tilejit')} imported from the build tree by Python {p.get('python')} "
            f"in a process of its own (NumPy {p.get('numpy')}, "
            f"PyTorch {p.get('torch') or 'not installed'}, {p.get('threads')} threads), "
            "timed alternately with the C++ side in the benchmark's process. "
        )
        ops = p.get("ops") or []
        out += f"Operators registered under torch.ops.tilejit: {', '.join(ops) or 'none'}"
        out += f" ({p['ops_note']}).\n\n" if p.get("ops_note") else ".\n\n"
    elif p.get("note"):
        out += f"The Python side did not run: {p['note']}.\n\n"
    out += (
        "Launch: the tutorial's kernel on a cache hit, `k(x, y, 3.0)` from Python against "
        "`Kernel::launch` from C++ (the same specialisation), loops of calls per sample; the "
        "figure is the difference of the medians per call. torch.ops: each operator's headline "
        "case through `torch.ops.tilejit.<op>` against the same call through the C API (phase 1 "
        "+ phase 2) on the same inputs, one call per sample, the cache flushed before each; the "
        "figure is the median of the per-sample ratios torch.ops / C API.\n\n"
    )
    out += PYTHON_HEADER
    for c in cases:
        out += python_row(c)
    notes = [c for c in cases if c.get("generated_s") and (c.get("note") or c.get("peer_note"))]
    diffs = [(c["name"], c["peer_max_abs_diff"]) for c in cases
             if c.get("peer_max_abs_diff") is not None]
    if notes:
        out += "\n"
    for c in notes:
        said = [t for t in (c.get("note"), c.get("peer_note") and "Python: " + c["peer_note"]) if t]
        out += f"- {c['name'].split('/', 1)[1]}: {'; '.join(said)}.\n"
    if diffs:
        out += "\ntorch.ops outputs against the C API's (max abs difference): "
        out += ", ".join(f"{n.split('/', 2)[2]} {d:.3g}" for n, d in diffs) + ".\n"
    return out + "\n"


def report(doc, outdir):
    by_op = group(doc)
    stem = f"{doc['host']['name']}-{doc['commit']}"
    made = plots(doc, by_op, outdir, stem)
    md = f"# tilejit benchmark report: {doc['host']['name']} @ {doc['commit']}\n\n"
    md += "Generated by `tilejit bench --report` (bench/report/make_report.py) from "
    md += f"`{stem}.json`; every figure below is from that run.\n\n"
    md += (
        "Columns: time = median per call; throughput = bytes or useful FLOPs over that time "
        "(calls/s for decode-sized calls); of roofline bound = max(bytes / bandwidth, FLOPs / peak) "
        "over the time, against the limits measured in the same run (none for decode-sized calls "
        "and compile latency); twin / generated and peer / generated = the median of the paired "
        "time ratios (> 1: the generated kernel is faster).\n\n"
    )
    md += "## Summary\n\n" + summary(doc, by_op) + "\n"
    if "roofline" in made:
        md += f"![roofline]({made['roofline']})\n\n"
    elif not made:
        md += "(no plots: matplotlib is not installed)\n\n"
    md += host_section(doc)
    md += peer_section(doc)
    for op, cases in by_op.items():
        if op == PYTHON_OP:
            md += python_section(doc, cases)
            continue
        md += f"## {OP_TITLES.get(op, op)}\n\n" + CASE_HEADER
        for c in cases:
            md += case_row(c, doc)
        notes = sorted({n for c in cases for n in (c.get("note"), c.get("peer_note"), c.get("twin_note")) if n})
        diffs = [(c["name"], c["peer_max_abs_diff"]) for c in cases if c.get("peer_max_abs_diff") is not None]
        if notes:
            md += "\nNotes: " + "; ".join(notes) + ".\n"
        if diffs:
            md += "\nPeer output against tilejit's (max abs difference): "
            md += ", ".join(f"{n.split('/', 1)[1]} {d:.3g}" for n, d in diffs) + ".\n"
        if op == "compile":
            tables = cold_cases(cases) + memory_cases(cases)
            for c in cases:
                if c.get("extra") and c not in tables and stage_items(c["extra"]):
                    md += "\nFigures of " + c["name"] + ": "
                    md += ", ".join(f"{k[:-3].replace('_', ' ')} {v:.3g} ms" for k, v in stage_items(c["extra"])) + ".\n"
            if tables:
                body = compile_latency_section(cases) + kernel_memory_section(cases)
                md += "\n" + body.rstrip("\n") + "\n"
        if op in made:
            md += f"\n![{op}]({made[op]})\n"
        md += "\n"
    md += scaling_section(doc)
    path = os.path.join(outdir, f"{stem}.md")
    with open(path, "w", encoding="utf-8") as f:
        f.write(md)
    return path, summary(doc, by_op)


def main(argv):
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    with open(argv[1], encoding="utf-8") as f:
        doc = json.load(f)
    os.makedirs(argv[2], exist_ok=True)
    path, table = report(doc, argv[2])
    print(f"report: {path}", file=sys.stderr)
    print(table, end="")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
