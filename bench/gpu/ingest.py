#!/usr/bin/env python3
"""Turns a GPU session's folder (bench/gpu/session.sh --out DIR) into issue
46's measures, here, without the GPU:

  1. tables    each measured table loads in shardlab's cost model; the GEMM
               table against XLA's measured one (../shared/data/
               xla-perf-tables), point by point, per dtype
  2. programs  shardlab-schedule's estimate of each timed JAX program with
               the measured tables, the error against the measured median,
               the median |error| (goal <= 10%)
  3. fusions   XLA's kernels (from its optimized HLO: count, kinds, bytes)
               beside shardlab's (from the report's fusion groups)
     overlap   how much a GEMM and a collective slow each other on two
               streams (overlap.json): the median slowdowns become the
               tables' `overlap` entry, which the scheduler applies to
               kernels and transfers running together
     attention the cuDNN attention programs' measured times over the price
               of the GEMMs their calls fuse: the tables'
               `fused_attention` entry, which prices every such call
  4. oracle    for each sharded program whose Shardy modules were kept:
               shardlab-opt -sdy-propagation-pipeline on Shardy's input
               against Shardy's output, value shardings agreeing / total,
               and the two tools' times (the local sdy_opt where it runs)

    python3 bench/gpu/ingest.py DIR [--build build] [--out REPORT.md] [--json FACTS.json]
        [--write-tables] [--write-corpus]

The session's tables, with the overlap and fused_attention entries added when
the session measured them, are written to DIR/derived/tables/ (the raw files
are not touched);
--write-tables copies those to examples/tables/ (named by device);
--write-corpus copies the Shardy pairs to tests/corpus/jax_shardy_oracle/.
Nothing in the repository changes without them. Exit 0 when every part that
has data ran; 1 when a program or pair could not be estimated or compared.
"""
import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "tests"))
sys.path.insert(0, os.path.join(ROOT, "tests", "differential"))
sys.path.insert(0, os.path.join(ROOT, "bench", "published"))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import gen_xla_gemm_presets  # noqa: E402  (the one parser of XLA's GEMM table)
import xla_hlo  # noqa: E402
from files import write_json, write_text  # noqa: E402
from run import percentile  # noqa: E402  (bench/published/run.py: numpy's linear rule)

# device name (nvidia-smi / jax device_kind) -> shardlab preset
PRESETS = [(r"H200", "h200"), (r"H100", "h100"), (r"B200", "b200"), (r"A100.*40GB", "a100-40gb"), (r"A100", "a100")]
XLA_DTYPE_KEYS = {"bf16": "bf16xbf16->bf16", "f32": "f32xf32->f32"}


def preset_for(device):
    for pattern, preset in PRESETS:
        if re.search(pattern, device or ""):
            return preset
    return None


# ---- 1. tables ---------------------------------------------------------------

def read_xla_gemm_table(path):
    """{sm: {(b, m, n, k, dtype key): FLOP/s}} of XLA's matmul_perf_table.txtpb,
    read by the parser that writes the presets' copy of it."""
    with open(path) as f:
        devices = gen_xla_gemm_presets.parse(f.read())
    return {sm: {(b, m, n, k, key): float(v) for b, m, n, k, key, v in rows}
            for sm, rows in devices.items()}


def compare_gemm_with_xla(table, xla):
    """Rows per dtype: points in common, median / p90 / worst |measured/XLA - 1|."""
    sm = table.get("metadata", {}).get("device", {}).get("sm_version")
    theirs = xla.get(sm, {})
    by_dtype = {}
    for g in table.get("gemms", []):
        key = "%sx%s->%s" % (g["lhs_dtype"], g["rhs_dtype"], g["out_dtype"])
        x = theirs.get((g["b"], g["m"], g["n"], g["k"], key))
        if x:
            by_dtype.setdefault(key, []).append((g["flop_per_s"] / x, g))
    rows = []
    for key, pts in sorted(by_dtype.items()):
        errs = [abs(r - 1) for r, _ in pts]
        worst = max(pts, key=lambda p: abs(p[0] - 1))
        rows.append({"dtype": key, "points": len(pts), "median_ratio": statistics.median(r for r, _ in pts),
                     "median_abs": statistics.median(errs), "p90_abs": percentile(errs, 0.9),
                     "worst": "%+.1f%% at b=%d m=%d n=%d k=%d" % (100 * (worst[0] - 1), worst[1]["b"], worst[1]["m"],
                                                                  worst[1]["n"], worst[1]["k"])})
    return sm, rows


def check_loads(build, path, table):
    """None when shardlab's cost model reads the table, else the error."""
    cost = os.path.join(build, "shardlab-cost")
    if table.get("gemms"):
        g = table["gemms"][0]
        args = ["gemm", "--m", str(g["m"]), "--n", str(g["n"]), "--k", str(g["k"]), "--b", str(g["b"]),
                "--dtypes", "%sx%s->%s" % (g["lhs_dtype"], g["rhs_dtype"], g["out_dtype"])]
    elif table.get("collectives"):
        c = table["collectives"][0]
        args = ["collective", "--op", c.get("op", "all-reduce"), "--bytes", "1048576", "--group-size", "2"]
    else:
        return "the table has neither gemms nor collectives"
    p = subprocess.run([cost, *args, "--tables", path, "--json"], capture_output=True, text=True)
    return None if p.returncode == 0 else (p.stderr.strip() or p.stdout.strip())[:300]


def tables_part(session, build, xla_path, write, overlap, facts):
    lines, ok = ["## Measured tables", ""], True
    facts["tables"] = []
    tables = sorted(f for f in os.listdir(os.path.join(session, "tables"))
                    if f.endswith(".shardlab.json")) if os.path.isdir(os.path.join(session, "tables")) else []
    if not tables:
        return lines + ["No measured table in this session (tables/*.shardlab.json).", ""], True, [], []
    xla = read_xla_gemm_table(xla_path) if xla_path and os.path.exists(xla_path) else {}
    paths, copies = [], []
    for name in tables:
        table = json.load(open(os.path.join(session, "tables", name)))
        if overlap:
            table["overlap"] = overlap
        path = os.path.join(session, "derived", "tables", name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        write_json(path, table)
        meta = table.get("metadata", {})
        device = meta.get("device", {}).get("name", "?")
        err = check_loads(build, path, table)
        ok &= err is None
        paths.append(path)
        fact = {"file": name, "device": device, "source": meta.get("source"), "loads": err is None,
                "gemm_points": len(table.get("gemms", [])), "collective_points": len(table.get("collectives", []))}
        facts["tables"].append(fact)
        lines.append("- `%s`: %s, %s, %d GEMM points, %d collective points, %s%s; loads: %s" % (
            name, device, meta.get("date", "?"), len(table.get("gemms", [])), len(table.get("collectives", [])),
            meta.get("source", "?"), ", with the overlap entry" if overlap else "",
            "yes" if err is None else "NO: " + err))
        if table.get("gemms") and xla:
            sm, rows = compare_gemm_with_xla(table, xla)
            fact["against_xla"] = {"sm": sm, "rows": rows}
            if rows:
                lines += ["", "Against XLA's measured table (%s), the points both measured:" % sm, "",
                          "| dtype | points | median measured/XLA | median abs | p90 abs | worst |",
                          "|---|---|---|---|---|---|"]
                lines += ["| %s | %d | %.3f | %.1f%% | %.1f%% | %s |" % (
                    r["dtype"], r["points"], r["median_ratio"], 100 * r["median_abs"], 100 * r["p90_abs"], r["worst"])
                    for r in rows]
            else:
                lines.append("  (XLA's table has no %s points in common)" % sm)
        if write:
            slug = (preset_for(device) or re.sub(r"\W+", "_", device.lower())).replace("-", "_")
            dest = os.path.join(ROOT, "examples", "tables", "%s_%s" % (slug, name))
            copies.append((path, dest))  # once every entry is in (main)
            lines.append("  written to %s" % os.path.relpath(dest, ROOT))
    return lines + [""], ok, paths, copies


# ---- 2 and 3. programs and fusions -------------------------------------------

def shardlab_kernels(report):
    """Kernels of a shardlab report: compute ops that run (not no-ops), by
    kind, and the boundary bytes of the memory-bound ones (not GEMMs or
    attention), as xla_hlo.summary's memory_bound_bytes."""
    per_kind, n, memory_bytes = {}, 0, 0
    for o in report.get("ops", []):
        if o.get("kind") != "compute" or o.get("reason") == "kIsNop" or o["end_us"] <= o["start_us"]:
            continue
        f = o.get("fusion")
        expl = o.get("cost_explanation", "")
        kind = f["kind"] if f else ("attention" if "flash attention" in expl else
                                    "gemm" if "gemm-table" in expl or "dot_general" in o["name"] else
                                    o["name"].split("@")[0].replace("stablehlo.", ""))
        per_kind[kind] = per_kind.get(kind, 0) + 1
        n += 1
        if f and kind not in ("gemm", "attention"):
            memory_bytes += f.get("bytes_read", 0) + f.get("bytes_written", 0)
    return n, per_kind, memory_bytes


def estimate(build, module, preset, tables):
    with tempfile.TemporaryDirectory() as tmp:
        report = os.path.join(tmp, "r.json")
        cmd = [os.path.join(build, "shardlab-schedule"), module, "--report", report]
        if preset:
            cmd += ["--preset", preset]
        for t in tables:
            cmd += ["--tables", t]
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode != 0:
            return None, (p.stderr.strip().split("\n") or [""])[-1][:300]
        return json.load(open(report)), None


def programs_part(session, build, tables, facts, fitted=()):
    """Each program's estimate against its measured median; the `fitted`
    ones set an entry of the tables (their error is zero by construction)
    and are left out of the median."""
    folder = os.path.join(session, "programs")
    index = os.path.join(folder, "programs.json")
    if not os.path.exists(index):
        return ["## Programs", "", "No programs in this session (programs/programs.json).", ""], True, []
    idx = json.load(open(index))
    device = idx.get("environment", {}).get("device_kind", "")
    preset = preset_for(device)
    rows, errors, ok = [], [], True
    facts["programs"] = {"device": device, "preset": preset, "rows": []}
    for entry in idx["programs"]:
        name = entry["name"]
        if not entry.get("ok"):
            rows.append("| %s | failed on the GPU: %s | | | | | |" % (name, entry.get("error", "?")[:120]))
            continue
        rec = json.load(open(os.path.join(folder, name + ".json")))
        report, err = estimate(build, os.path.join(folder, name + ".mlir"), preset, tables)
        hlo = os.path.join(folder, name + ".hlo.txt")
        xla = xla_hlo.summary(open(hlo).read()) if os.path.exists(hlo) else None
        if report is None:
            ok = False
            rows.append("| %s | %.3f | shardlab-schedule failed: %s | | | | |" % (name, 1e3 * rec["median_s"], err))
            continue
        est_s = report["step_time_us"] * 1e-6
        error = est_s / rec["median_s"] - 1
        if name not in fitted:
            errors.append(abs(error))
        n, kinds, memory_bytes = shardlab_kernels(report)
        kinds_text = ", ".join("%s %d" % kv for kv in sorted(kinds.items()))
        xla_text = ("%d (%s)" % (xla["executed"], ", ".join("%s %d" % kv for kv in sorted(xla["per_kind"].items())))
                    if xla else "?")
        bytes_text = "%.1f / %s" % (memory_bytes / 2**20, "%.1f" % (xla["memory_bound_bytes"] / 2**20) if xla else "?")
        facts["programs"]["rows"].append({
            "name": name, "measured_s": rec["median_s"], "estimated_s": est_s, "error": error,
            "shardlab_kernels": n, "shardlab_kinds": kinds, "shardlab_memory_bound_bytes": memory_bytes,
            "xla": xla, "assumptions": report.get("assumptions", [])})
        rows.append("| %s | %.3f | %.3f | %+.1f%% | %d (%s) | %s | %s |" % (
            name + (" (sets fused_attention)" if name in fitted else ""), 1e3 * rec["median_s"], 1e3 * est_s, 100 * error, n, kinds_text, xla_text, bytes_text))
    lines = ["## Programs: estimate against the GPU (%s, preset %s)" % (device or "?", preset or "none"), "",
             "| program | measured ms (median) | estimated ms | error | shardlab kernels | XLA kernels (executed) "
             "| memory-bound kernels' MiB, shardlab / XLA |",
             "|---|---|---|---|---|---|---|"] + rows + [""]
    if errors:
        facts["programs"].update(median_abs_error=statistics.median(errors), worst_abs_error=max(errors))
        lines.append("%d programs estimated: median |error| %.1f%% (goal <= 10%%), worst %.1f%%%s." % (
            len(errors), 100 * statistics.median(errors), 100 * max(errors),
            ", the %d that set an entry left out" % len(fitted) if fitted else ""))
    return lines + [""], ok, errors


# ---- attention: a cuDNN call's time over its GEMMs' price ---------------------

ATTENTION_FORWARD, ATTENTION_GRAD = "attention_cudnn_bf16", "attention_cudnn_grad_bf16"


def attention_split(report):
    """(forward calls' us, backward calls' us, every other op's us) of a
    single-device program's estimate: its ops run one after another, so
    the step is their sum."""
    forward = backward = 0.0
    for o in report.get("ops", []):
        expl = o.get("cost_explanation", "")
        if o.get("kind") != "compute" or "flash attention" not in expl:
            continue
        us = o["end_us"] - o["start_us"]
        if "backward (5 GEMMs)" in expl:
            backward += us
        else:
            forward += us
    return forward, backward, report["step_time_us"] - forward - backward


def attention_entry(measured_f_s, split_f, measured_g_s, split_g, device):
    """The tables' fused_attention entry from the two programs: the forward
    factor makes the forward program's estimate its measured time (its other
    ops as priced); the backward factor then does the same for the gradient
    program, whose forward call takes the forward factor. Worked example:
    forward program measured 1.3 ms, its call priced 1.0 ms and nothing else:
    x1.3; gradient program 4.2 ms, its forward call 1.0 ms (so 1.3), its
    backward 2.5 ms, 0.1 ms else: (4.2 - 0.1 - 1.3) / 2.5 = x1.12. None, with
    why, when a factor falls outside what the tables accept (0.1-100)."""
    f_fwd, _, f_other = split_f
    g_fwd, g_bwd, g_other = split_g
    if not (f_fwd > 0 and g_bwd > 0):
        return None, "a program has no cuDNN attention call in its estimate"
    forward = (1e6 * measured_f_s - f_other) / f_fwd
    backward = (1e6 * measured_g_s - g_other - forward * g_fwd) / g_bwd
    for name, v in (("forward", forward), ("backward", backward)):
        if not 0.1 <= v <= 100:
            return None, "the %s factor x%.3g is outside 0.1-100: the programs' times do not fit the model" % (name, v)
    return {"forward_slowdown": round(forward, 4), "backward_slowdown": round(backward, 4),
            "source": "bench/gpu/programs.py on %s: %s measured %.3f ms, %s %.3f ms, over their cuDNN calls' "
                      "GEMMs at the session's rates" % (device or "?", ATTENTION_FORWARD, 1e3 * measured_f_s,
                                                        ATTENTION_GRAD, 1e3 * measured_g_s)}, None


def attention_part(session, build, tables, facts):
    """The attention report's lines and the tables' fused_attention entry
    (or None): the two cuDNN programs estimated with the session's tables
    before the entry, against their measured medians."""
    folder = os.path.join(session, "programs")
    head = ["## cuDNN attention: its time over its GEMMs' price", ""]
    index = os.path.join(folder, "programs.json")
    have = {e["name"]: e for e in json.load(open(index))["programs"]} if os.path.exists(index) else {}
    if not all(have.get(n, {}).get("ok") for n in (ATTENTION_FORWARD, ATTENTION_GRAD)):
        return head + ["Not measured: the session has no %s and %s that ran." % (ATTENTION_FORWARD, ATTENTION_GRAD),
                       ""], None
    idx = json.load(open(index))
    device = idx.get("environment", {}).get("device_kind", "")
    measured, splits = {}, {}
    for name in (ATTENTION_FORWARD, ATTENTION_GRAD):
        measured[name] = json.load(open(os.path.join(folder, name + ".json")))["median_s"]
        report, err = estimate(build, os.path.join(folder, name + ".mlir"), preset_for(device), tables)
        if report is None:
            return head + ["%s: shardlab-schedule failed: %s" % (name, err), ""], None
        splits[name] = attention_split(report)
    entry, why = attention_entry(measured[ATTENTION_FORWARD], splits[ATTENTION_FORWARD],
                                 measured[ATTENTION_GRAD], splits[ATTENTION_GRAD], device)
    lines = head + ["| program | measured ms | its forward calls, priced ms | backward calls | other ops |",
                    "|---|---|---|---|---|"]
    for name in (ATTENTION_FORWARD, ATTENTION_GRAD):
        f, b, o = splits[name]
        lines.append("| %s | %.3f | %.3f | %.3f | %.3f |" % (name, 1e3 * measured[name], f / 1e3, b / 1e3, o / 1e3))
    facts["attention"] = {"measured_s": measured, "priced_us": splits, "entry": entry, "why_not": why}
    if entry is None:
        return lines + ["", "No entry: " + why, ""], None
    said = "A call takes x%.3f (forward) and x%.3f (backward) the price of its GEMMs" % (
        entry["forward_slowdown"], entry["backward_slowdown"])
    if not tables:
        return lines + ["", said + "; no measured table in this session carries it (`shardlab-schedule "
                        "--attention-slowdown %g,%g` gives it by hand)." % (
                            entry["forward_slowdown"], entry["backward_slowdown"]), ""], entry
    return lines + ["", said + ": the tables in derived/tables/ carry it as their fused_attention entry, which "
                    "prices every cuDNN attention call (the two programs above then match by construction).",
                    ""], entry


def add_entry(paths, key, entry):
    """Writes `key: entry` into each derived table."""
    for path in paths:
        table = json.load(open(path))
        table[key] = entry
        write_json(path, table)


# ---- overlap: GEMM and collective together -----------------------------------

def overlap_entry(data):
    """The tables' overlap entry (schemas/perf_table.schema.json) from
    overlap.json: the median slowdowns over its cases, at least 1 (a
    median below 1 is noise, not a speed-up), and how they were measured;
    None without cases."""
    cases = data.get("cases") or []
    if not cases:
        return None
    meta = data.get("metadata", {})
    sizes = sorted(c["bytes"] >> 20 for c in cases)
    return {"compute_slowdown": round(max(1.0, statistics.median(c["gemm_slowdown"] for c in cases)), 4),
            "comm_slowdown": round(max(1.0, statistics.median(c["collective_slowdown"] for c in cases)), 4),
            "source": "bench/gpu/overlap.py: medians of %d cases (a bf16 GEMM loop beside an NCCL %s loop of "
                      "%d-%d MiB, on two streams) on %s x %s, NCCL %s" % (
                          len(cases), "/".join(sorted({c["collective"] for c in cases})), sizes[0], sizes[-1],
                          meta.get("gpus", "?"), meta.get("device", "?"), meta.get("nccl", "?"))}


def overlap_part(session, facts):
    """The overlap report's lines and the tables' overlap entry (or None)."""
    path = os.path.join(session, "overlap.json")
    if not os.path.exists(path):
        return ["## GEMM and collective overlapped", "", "No overlap measurement in this session.", ""], None
    data = json.load(open(path))
    facts["overlap"] = data
    meta = data.get("metadata", {})
    lines = ["## GEMM and collective overlapped (%s x %s, NCCL %s)" % (meta.get("gpus", "?"), meta.get("device", "?"),
                                                                      meta.get("nccl", "?")), "",
             "| GEMM (bf16) | collective | MiB | GEMM alone ms | together | slowdown | collective alone ms | together | slowdown |",
             "|---|---|---|---|---|---|---|---|---|"]
    for c in data["cases"]:
        lines.append("| %s | %s | %d | %.2f | %.2f | x%.3f | %.2f | %.2f | x%.3f |" % (
            "x".join(map(str, c["gemm"])), c["collective"], c["bytes"] >> 20, c["gemm_alone_ms"], c["gemm_together_ms"],
            c["gemm_slowdown"], c["collective_alone_ms"], c["collective_together_ms"], c["collective_slowdown"]))
    entry = overlap_entry(data)
    if entry:
        lines += ["", "Median slowdown while overlapped: GEMM x%.3f, collective x%.3f." % (
            statistics.median(c["gemm_slowdown"] for c in data["cases"]),
            statistics.median(c["collective_slowdown"] for c in data["cases"])),
            "", "The tables in derived/tables/ carry them as their overlap entry (compute_slowdown %g, "
            "comm_slowdown %g): `shardlab-schedule --tables` with one applies them to kernels and transfers "
            "running together." % (entry["compute_slowdown"], entry["comm_slowdown"])]
        facts["overlap_entry"] = entry
    return lines + [""], entry


# ---- 4. Shardy as the oracle -------------------------------------------------

def run_tool(tool, flags, path):
    t0 = time.perf_counter()
    p = subprocess.run([tool, *flags, "-allow-unregistered-dialect", path], capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr, time.perf_counter() - t0


def oracle_part(session, build, sdy_opt, write, facts):
    import run_differential as rd

    folder = os.path.join(session, "sharded")
    index = os.path.join(folder, "sharded.json")
    if not os.path.exists(index):
        return ["## Shardy as the oracle", "", "No sharded programs in this session.", ""], True, None
    idx = json.load(open(index))
    opt = os.path.join(build, "shardlab-opt")
    flags = ["-sdy-propagation-pipeline"]
    agree = total = 0
    classes, rows, ok = {}, [], True
    mine_s = theirs_s = 0.0
    timed_both = 0
    missing = [e["name"] for e in idx["programs"] if not e.get("oracle")]
    for entry in idx["programs"]:
        if not entry.get("oracle"):
            continue
        name = entry["name"]
        before = os.path.join(folder, name + ".before_propagation.mlir")
        after = os.path.join(folder, name + ".after_propagation.mlir")
        rc, mine, err, t_mine = run_tool(opt, flags, before)
        rc2, oracle, err2, _ = run_tool(opt, [], after)  # the oracle's text in shardlab's printing
        if rc != 0 or rc2 != 0:
            ok = False
            cls = "shardlab fails"
            rows.append("| %s | %s |" % (name, ((err if rc else err2).strip().split("\n") or [""])[0][:200]))
        else:
            cls = rd.classify(oracle, mine)
            a, b = rd.shardings_by_line(oracle), rd.shardings_by_line(mine)
            same = sum(1 for x, y in zip(a, b) if x == y)
            agree += same
            total += max(len(a), len(b))
            if cls != "identical":
                rows.append("| %s | %s: %s |" % (name, cls, rd.first_difference(oracle, mine).replace("\n", " ")[:300]))
        classes[cls] = classes.get(cls, 0) + 1
        mine_s += t_mine
        if sdy_opt:
            rc3, _, _, t_theirs = run_tool(sdy_opt, flags, before)
            if rc3 == 0:
                theirs_s += t_theirs
                timed_both += 1
        if write:
            dest = os.path.join(ROOT, "tests", "corpus", "jax_shardy_oracle")
            os.makedirs(dest, exist_ok=True)
            for path in (before, after):
                shutil.copyfile(path, os.path.join(dest, os.path.basename(path)))
    facts["oracle"] = {"programs": len(idx["programs"]), "classes": classes, "values_agreeing": agree,
                       "values": total, "shardlab_opt_s": mine_s, "sdy_opt_s": theirs_s,
                       "timed_both": timed_both, "no_dump": missing}
    lines = ["## Shardy as the oracle (%s)" % idx.get("environment", {}).get("jax", "?"), "",
             "%d programs, %d with Shardy's modules before and after propagation; %s." % (
                 len(idx["programs"]), sum(classes.values()),
                 ", ".join("%s %d" % kv for kv in sorted(classes.items())) or "none compared")]
    if total:
        lines.append("Value shardings agreeing: %d / %d (%.1f%%)." % (agree, total, 100.0 * agree / total))
    if timed_both:
        lines.append("Time on the same modules: shardlab-opt %.3f s, the local sdy_opt %.3f s (%d modules; the "
                     "local sdy_opt is the suite's Shardy, not the machine's)." % (mine_s, theirs_s, timed_both))
    if missing:
        lines.append("No Shardy dump kept for %d: %s." % (len(missing), ", ".join(missing[:10])))
    if rows:
        lines += ["", "| program | difference |", "|---|---|"] + rows
    return lines + [""], ok, (agree, total)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("session", help="the folder bench/gpu/session.sh wrote")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--xla-table", default=None, help="XLA's matmul_perf_table.txtpb (default: the shared data's)")
    ap.add_argument("--sdy-opt", default=None, help="Shardy's sdy_opt for the times (default: the shared data's)")
    ap.add_argument("--out", help="write the report (markdown) here too")
    ap.add_argument("--json", help="write the measures as JSON here")
    ap.add_argument("--write-tables", action="store_true")
    ap.add_argument("--write-corpus", action="store_true")
    a = ap.parse_args(argv)
    if not os.path.isdir(a.session):
        ap.error("%s is not a folder" % a.session)
    for tool in ("shardlab-schedule", "shardlab-opt", "shardlab-cost"):
        if not os.access(os.path.join(a.build, tool), os.X_OK):
            ap.error("%s is not built in %s" % (tool, a.build))
    import shared_data

    xla_table = a.xla_table or shared_data.default_path("data", "xla-perf-tables", "matmul_perf_table.txtpb")
    sdy_opt = a.sdy_opt or shared_data.default_path("tools", "shardy", "sdy_opt")
    if sdy_opt and not os.access(sdy_opt, os.X_OK):
        sdy_opt = None
    manifest = os.path.join(a.session, "manifest.json")
    head = ["# GPU session %s" % os.path.abspath(a.session), ""]
    if os.path.exists(manifest):
        m = json.load(open(manifest))
        head += ["Stages: " + ", ".join("%s %s" % (s, "ok" if v["exit"] == 0 else "exit %s" % v["exit"])
                                        for s, v in m["stages"].items()), ""]
    facts = {"session": os.path.abspath(a.session)}
    v_lines, overlap = overlap_part(a.session, facts)
    t_lines, t_ok, tables, copies = tables_part(a.session, a.build, xla_table, a.write_tables, overlap, facts)
    a_lines, attention = attention_part(a.session, a.build, tables, facts)
    if attention:
        add_entry(tables, "fused_attention", attention)
    for path, dest in copies:
        write_json(dest, json.load(open(path)))
    fitted = (ATTENTION_FORWARD, ATTENTION_GRAD) if attention and tables else ()
    p_lines, p_ok, _ = programs_part(a.session, a.build, tables, facts, fitted)
    o_lines, o_ok, _ = oracle_part(a.session, a.build, sdy_opt, a.write_corpus, facts)
    text = "\n".join(head + t_lines + a_lines + p_lines + v_lines + o_lines)
    print(text)
    if a.out:
        write_text(a.out, text)
    if a.json:
        write_json(a.json, facts)
    return 0 if t_ok and p_ok and o_ok else 1


if __name__ == "__main__":
    sys.exit(main())
