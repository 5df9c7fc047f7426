#!/usr/bin/env python3
"""scripts/check_layers.py passes a clean tree and names a violation."""
import pathlib
import subprocess
import sys
import tempfile

SCRIPT = pathlib.Path(__file__).resolve().parents[2] / "scripts" / "check_layers.py"


def run(root, *layers):
    return subprocess.run([sys.executable, SCRIPT, "--root", root, *layers],
                          capture_output=True, text=True)


def main():
    with tempfile.TemporaryDirectory() as tmp:
        root = pathlib.Path(tmp)
        (root / "src" / "ir").mkdir(parents=True)
        (root / "src" / "sharding").mkdir(parents=True)
        (root / "src" / "ir" / "a.cpp").write_text('#include "shardlab/sharding/mesh.h"\n')
        clean = run(root, "sharding=", "ir=sharding")
        assert clean.returncode == 0, clean.stderr
        (root / "src" / "sharding" / "b.cpp").write_text(
            '// uses the IR\n#include "shardlab/ir/ir.h"\n')
        bad = run(root, "sharding=", "ir=sharding")
        assert bad.returncode == 1, bad
        assert "b.cpp:2: layer 'sharding' may not include 'ir'" in bad.stderr, bad.stderr
        unknown = run(root, "ir=")
        assert "unknown layer 'sharding'" in unknown.stderr, unknown.stderr
        (root / "src" / "sharding" / "b.cpp").write_text('#include "sharding/c.h"\n')
        # A private header of a layer not used is named like a public one.
        (root / "src" / "sharding" / "d.cpp").write_text('#include "ir/op_registry.h"\n')
        private = run(root, "sharding=", "ir=sharding")
        assert "d.cpp:1: layer 'sharding' may not include 'ir'" in private.stderr, private.stderr
        (root / "src" / "sharding" / "d.cpp").unlink()
        assert run(root, "sharding=", "ir=sharding").returncode == 0
        # A public header may not include a private one: it is not installed.
        (root / "include" / "shardlab" / "ir").mkdir(parents=True)
        (root / "include" / "shardlab" / "ir" / "ir.h").write_text(
            '#pragma once\n#include "ir/op_registry.h"\n')
        leak = run(root, "sharding=", "ir=sharding")
        assert leak.returncode == 1
        assert "ir.h:2: a public header includes the private header 'ir/...'" in leak.stderr, leak.stderr
    print("check_layers: clean tree passes, violations are named")


if __name__ == "__main__":
    main()
