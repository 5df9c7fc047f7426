"""What the example tests that check estimates by hand share: a list of
checks that prints each one, and a GEMM table of one rate (so a GEMM's time
is its FLOPs over that rate, worked out by hand)."""
import json


class Checks:
    def __init__(self):
        self.failures = []

    def check(self, ok, what):
        print(("ok   " if ok else "FAIL ") + what)
        if not ok:
            self.failures.append(what)

    say = check

    def near(self, what, got, want, rel=1e-3):
        """`got` within `rel` of the hand-worked `want`."""
        ok = abs(got - want) <= rel * abs(want)
        self.check(ok, f"{what}: {got:.4f}, by hand {want:.4f}")

    def report(self, what):
        """The exit status: 1 when a check failed."""
        if self.failures:
            print(f"FAILED: {len(self.failures)} check(s)")
            return 1
        print(f"all {what} checks passed")
        return 0


def one_rate_table(path, rate, collectives=()):
    """A shardlab-perf-table where every bf16 GEMM runs at `rate` FLOP/s,
    on a grid of powers of 4 up to 16384 in each of m, n and k."""
    sizes = [4 ** i for i in range(8)]
    entries = [{"b": 1, "m": m, "n": n, "k": k, "lhs_dtype": "bf16", "rhs_dtype": "bf16", "out_dtype": "bf16",
                "flop_per_s": rate} for m in sizes for n in sizes for k in sizes]
    path.write_text(json.dumps({"format": "shardlab-perf-table", "version": 1,
                                "metadata": {"source": "analytical", "device": {"name": "test", "sm_version": "sm_90",
                                                                                "gpu_count": 8}, "partition_size": 8},
                                "collectives": list(collectives), "gemms": entries}))
