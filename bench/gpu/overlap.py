#!/usr/bin/env python3
"""How much a GEMM and an NCCL collective slow each other when they overlap
(issue 43: the estimates run overlapped compute at full speed; the NCCL
kernels take SMs and memory bandwidth from it, by an amount no datasheet
gives). Each GPU runs a GEMM loop on one stream and a collective loop on
another, first each alone, then both at once, timed with CUDA events:

    torchrun --standalone --nproc_per_node=8 bench/gpu/overlap.py --out overlap.json
    python3 bench/gpu/overlap.py --list     # the plan, no torch needed

For each (GEMM, collective, bytes) case it records the alone and together
times of both loops (median of --repeats, the slowest rank's) and the
slowdowns together / alone; "together" times one loop while the other runs
twice its calls, so the timed loop overlaps for its whole length. Rank 0
writes --out (atomically).
"""
import argparse
import os
import statistics
import sys

from files import write_json

GEMMS = [(8192, 8192, 8192), (4096, 4096, 4096)]           # m, n, k, bf16
COLLECTIVES = ["all-gather", "reduce-scatter", "all-reduce"]
BYTES = [64 << 20, 256 << 20, 1 << 30]                       # XLA's bytes_transferred
TARGET_MS = 60.0                                             # each loop's length alone


def plan():
    return [(g, c, b) for g in GEMMS for c in COLLECTIVES for b in BYTES]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", help="the JSON written by rank 0")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--list", action="store_true", help="print the cases and exit")
    a = ap.parse_args()
    if a.list:
        for (m, n, k), c, b in plan():
            print("gemm %dx%dx%d bf16 | %s %d MiB" % (m, n, k, c, b >> 20))
        print("# %d cases" % len(plan()))
        return 0
    if not a.out:
        ap.error("--out is required (or --list)")
    import torch
    import torch.distributed as dist

    local = int(os.environ.get("LOCAL_RANK", "0"))
    torch.cuda.set_device(local)
    dist.init_process_group("nccl")
    world, rank = dist.get_world_size(), dist.get_rank()
    comm = torch.cuda.Stream()
    compute = torch.cuda.current_stream()

    def timed(stream, fn, count):
        """Launch fn count times on stream between two events; the events."""
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        with torch.cuda.stream(stream):
            start.record(stream)
            for _ in range(count):
                fn()
            end.record(stream)
        return start, end

    def slowest(ms):
        t = torch.tensor([ms], device="cuda")
        dist.all_reduce(t, op=dist.ReduceOp.MAX)
        return float(t.item())

    def collective(op, nbytes):
        elems = nbytes // 2
        if op == "all-gather":
            inp = torch.ones(elems // world, dtype=torch.bfloat16, device="cuda")
            out = torch.empty(elems // world * world, dtype=torch.bfloat16, device="cuda")
            return lambda: dist.all_gather_into_tensor(out, inp)
        if op == "reduce-scatter":
            inp = torch.ones(elems // world * world, dtype=torch.bfloat16, device="cuda")
            out = torch.empty(elems // world, dtype=torch.bfloat16, device="cuda")
            return lambda: dist.reduce_scatter_tensor(out, inp)
        buf = torch.ones(elems, dtype=torch.bfloat16, device="cuda")
        return lambda: dist.all_reduce(buf)

    def count_for(stream, fn):
        """Calls of fn that take about TARGET_MS alone."""
        s, e = timed(stream, fn, 3)
        torch.cuda.synchronize()
        one = max(slowest(s.elapsed_time(e)) / 3, 1e-3)
        return max(1, int(round(TARGET_MS / one)))

    records = []
    for (m, n, k), op, nbytes in plan():
        x = torch.randn(m, k, dtype=torch.bfloat16, device="cuda")
        w = torch.randn(k, n, dtype=torch.bfloat16, device="cuda")
        y = torch.empty(m, n, dtype=torch.bfloat16, device="cuda")
        gemm = lambda: torch.mm(x, w, out=y)  # noqa: E731
        coll = collective(op, nbytes)
        for _ in range(2):  # warm-up: NCCL's first call sets up its channels, cuBLAS its handle
            with torch.cuda.stream(comm):
                coll()
            gemm()
        torch.cuda.synchronize()
        g_count, c_count = count_for(compute, gemm), count_for(comm, coll)
        alone_g, alone_c, both_g, both_c = [], [], [], []
        for _ in range(a.repeats):
            s, e = timed(compute, gemm, g_count)
            torch.cuda.synchronize()
            alone_g.append(slowest(s.elapsed_time(e)))
            s, e = timed(comm, coll, c_count)
            torch.cuda.synchronize()
            alone_c.append(slowest(s.elapsed_time(e)))
            # Each timed loop beside the other for its whole length (the
            # cost model's factor is a kernel's slowdown while a transfer is
            # in flight): the other loop runs twice its calls, so that
            # neither timed loop has a tail alone.
            dist.barrier()
            torch.cuda.synchronize()
            timed(comm, coll, 2 * c_count)
            gs, ge = timed(compute, gemm, g_count)
            torch.cuda.synchronize()
            both_g.append(slowest(gs.elapsed_time(ge)))
            dist.barrier()
            torch.cuda.synchronize()
            timed(compute, gemm, 2 * g_count)
            cs, ce = timed(comm, coll, c_count)
            torch.cuda.synchronize()
            both_c.append(slowest(cs.elapsed_time(ce)))
        rec = {"gemm": [m, n, k], "dtype": "bf16", "collective": op, "bytes": nbytes, "gpus": world,
               "gemm_calls": g_count, "collective_calls": c_count,
               "gemm_alone_ms": statistics.median(alone_g), "gemm_together_ms": statistics.median(both_g),
               "collective_alone_ms": statistics.median(alone_c),
               "collective_together_ms": statistics.median(both_c)}
        rec["gemm_slowdown"] = rec["gemm_together_ms"] / rec["gemm_alone_ms"]
        rec["collective_slowdown"] = rec["collective_together_ms"] / rec["collective_alone_ms"]
        records.append(rec)
        if rank == 0:
            print("%s %d MiB beside gemm %dx%dx%d: gemm x%.3f, collective x%.3f" % (
                op, nbytes >> 20, m, n, k, rec["gemm_slowdown"], rec["collective_slowdown"]),
                file=sys.stderr, flush=True)
    if rank == 0:
        meta = {"device": torch.cuda.get_device_name(), "gpus": world, "torch": torch.__version__,
                "nccl": ".".join(map(str, torch.cuda.nccl.version())), "repeats": a.repeats,
                "method": "CUDA events around each loop on its own stream; median of repeats; slowest rank"}
        write_json(a.out, {"metadata": meta, "cases": records})
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
