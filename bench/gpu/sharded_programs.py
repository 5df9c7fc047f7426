#!/usr/bin/env python3
"""Sharded JAX programs for issue 46, item 4: the current Shardy (inside the
machine's jaxlib) as the oracle. On 8 virtual CPU devices, each program is
lowered with Shardy on (JAX's module, with `sdy.mesh` and the argument
shardings) and compiled with XLA dumping, so that Shardy's own modules before
and after its propagation are kept.

    python3 bench/gpu/sharded_programs.py --out DIR [--only REGEX]
    python3 bench/gpu/sharded_programs.py --list      # no JAX needed

Under DIR, for each program NAME:
  NAME.jax.mlir                 lowered.as_text(): what JAX hands to XLA
  NAME.before_propagation.mlir  Shardy's module as its propagation starts
  NAME.after_propagation.mlir   ... and as it ends (the oracle's answer)
  NAME.json                     mesh, shardings asked, the compiled
                                executable's input/output shardings, the
                                dump files found, compile seconds
and DIR/sharded.json, the index. Where XLA wrote no Shardy dump (another
XLA version, another layout of its dump folder) the record says so and
keeps every .mlir the dump has under NAME.dump/, so the ingest can be fixed
without another GPU session.

Programs are declared once (TEMPLATES x LAYOUTS, below) and built lazily, so
--list runs without JAX (the dry run under ctest counts them: >= 50).
"""
import argparse
import glob
import os
import re
import shutil
import sys
import tempfile
import time
import traceback

from files import write_json, write_text

# Meshes: name -> (shape, axis names). 8 devices each.
MESHES = {"x8": ((8,), ("x",)), "x2y4": ((2, 4), ("x", "y")), "x2y2z2": ((2, 2, 2), ("x", "y", "z"))}

# template -> list of (layout name, mesh, argument PartitionSpecs as tuples
# of axis names or None per dimension; a string "open" leaves that argument
# unsharded). Every (template, layout) pair is one program.
LAYOUTS = {
    "mlp": [
        ("dp", "x8", [("x", None), (None, None), (None, None)]),
        ("fsdp", "x8", [("x", None), ("x", None), ("x", None)]),
        ("tp", "x2y4", [(None, None), (None, "y"), ("y", None)]),
        ("dp_tp", "x2y4", [("x", None), (None, "y"), ("y", None)]),
        ("fsdp_tp", "x2y4", [("x", None), ("x", "y"), ("y", "x")]),
        ("open_weights", "x2y4", [("x", None), "open", "open"]),
        ("3d", "x2y2z2", [(("x", "y"), None), ("z", None), (None, "z")]),
    ],
    "attention": [
        ("dp", "x8", [("x", None, None, None)] * 3),
        ("heads", "x2y4", [("x", None, "y", None)] * 3),
        ("seq_q", "x2y4", [("x", "y", None, None), ("x", None, None, None), ("x", None, None, None)]),
    ],
    "layernorm": [
        ("rows", "x8", [("x", None), (None,), (None,)]),
        ("features", "x2y4", [("x", "y"), ("y",), ("y",)]),
    ],
    "embedding": [
        ("vocab", "x2y4", [("y", None), ("x", None)]),
        ("hidden", "x2y4", [(None, "y"), ("x", None)]),
        ("batch", "x8", [(None, None), ("x", None)]),
    ],
    "conv2d": [
        ("batch", "x8", [("x", None, None, None), (None, None, None, None)]),
        ("out_features", "x2y4", [("x", None, None, None), (None, None, None, "y")]),
        ("in_features", "x2y4", [("x", None, None, "y"), (None, None, "y", None)]),
        ("spatial", "x2y4", [(None, "x", None, None), (None, None, None, "y")]),
    ],
    "fori_loop": [
        ("dp", "x8", [("x", None), (None, None)]),
        ("tp", "x2y4", [(None, None), (None, "y")]),
        ("2d", "x2y4", [("x", None), (None, "y")]),
    ],
    "scan_layers": [
        ("dp", "x8", [("x", None), (None, None, None), (None, None, None)]),
        ("tp", "x2y4", [("x", None), (None, None, "y"), (None, "y", None)]),
        ("fsdp", "x8", [("x", None), (None, "x", None), (None, None, "x")]),
    ],
    "shard_map_psum": [
        ("x", "x8", [("x", None), (None, None)]),
        ("xy", "x2y4", [("x", "y"), ("y", None)]),
    ],
    "constraint": [
        ("reshard_mid", "x2y4", [("x", None), (None, None)]),
        ("open_args", "x2y4", ["open", "open"]),
    ],
    "reduce": [
        ("sum_sharded_dim", "x8", [("x", None)]),
        ("sum_other_dim", "x2y4", [("x", "y")]),
        ("max_both", "x2y4", [("x", "y")]),
    ],
    "reshape_transpose": [
        ("split_dim", "x8", [("x", None)]),
        ("merge_dims", "x2y4", [("x", "y", None)]),
        ("transpose", "x2y4", [("x", "y", None)]),
    ],
    "batched_dot": [
        ("batch", "x8", [("x", None, None), ("x", None, None)]),
        ("contracting", "x2y4", [("x", None, "y"), ("x", "y", None)]),
        ("free_dims", "x2y4", [(None, "x", None), (None, None, "y")]),
    ],
    "scatter_add": [
        ("rows", "x8", [("x", None), (None,), (None, None)]),
        ("columns", "x2y4", [(None, "y"), (None,), (None, "y")]),
    ],
    "dynamic_slice": [
        ("sharded_source", "x8", [("x", None)]),
        ("other_dim", "x2y4", [(None, "y")]),
    ],
    "concat_pad": [
        ("along_sharded", "x8", [("x", None), ("x", None)]),
        ("along_other", "x2y4", [("x", None), ("x", None)]),
    ],
    "cumsum_sort": [
        ("cumsum_rows", "x8", [("x", None)]),
        ("sort_rows", "x2y4", [("x", None)]),
    ],
    "gather_rows": [
        ("table_rows", "x8", [("x", None), (None,)]),
        ("indices", "x8", [(None, None), ("x",)]),
    ],
    "train_step": [
        ("dp", "x8", [("x", None), (None, None), (None, None)]),
        ("fsdp", "x8", [("x", None), ("x", None), (None, "x")]),
        ("tp", "x2y4", [("x", None), (None, "y"), ("y", None)]),
    ],
}


def programs():
    return [(t + "_" + layout, t, layout, mesh, specs) for t, rows in LAYOUTS.items() for layout, mesh, specs in rows]


def template(name):
    """(function, argument shapes) of a template; shapes divide every mesh axis."""
    import jax
    import jax.numpy as jnp

    f32 = jnp.float32

    def s(*shape, dtype=f32):
        return jax.ShapeDtypeStruct(shape, dtype)

    if name == "mlp":
        return (lambda x, w1, w2: jax.nn.relu(x @ w1) @ w2), [s(64, 32), s(32, 128), s(128, 32)]
    if name == "attention":
        return (lambda q, k, v: jax.nn.dot_product_attention(q, k, v, is_causal=True)), [s(8, 16, 8, 16)] * 3
    if name == "layernorm":
        def ln(x, g, b):
            m = jnp.mean(x, -1, keepdims=True)
            v = jnp.mean(jnp.square(x - m), -1, keepdims=True)
            return (x - m) * jax.lax.rsqrt(v + 1e-5) * g + b
        return ln, [s(64, 32), s(32), s(32)]
    if name == "embedding":
        return (lambda table, ids: jnp.take(table, ids, axis=0)), [s(64, 32), s(16, 8, dtype=jnp.int32)]
    if name == "conv2d":
        def conv(x, w):
            return jax.lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))
        return conv, [s(8, 16, 16, 8), s(3, 3, 8, 16)]
    if name == "fori_loop":
        def loop(x, w):
            return jax.lax.fori_loop(0, 4, lambda i, h: jnp.tanh(h @ w), x)
        return loop, [s(64, 32), s(32, 32)]
    if name == "scan_layers":
        def stack(x, w1, w2):
            return jax.lax.scan(lambda h, ws: (h + jax.nn.relu(h @ ws[0]) @ ws[1], None), x, (w1, w2))[0]
        return stack, [s(64, 32), s(4, 32, 64), s(4, 64, 32)]
    # The function of these is built in build(): it needs the mesh or the layout.
    if name == "shard_map_psum":
        return None, [s(64, 32), s(32, 16)]
    if name == "constraint":
        return None, [s(64, 32), s(32, 64)]
    if name in ("reduce", "cumsum_sort"):
        return None, [s(64, 32)]
    if name == "reshape_transpose":
        return None, None
    if name == "batched_dot":
        return (lambda a, b: jnp.einsum("bmk,bkn->bmn", a, b)), [s(8, 16, 32), s(8, 32, 16)]
    if name == "scatter_add":
        return (lambda x, idx, upd: x.at[idx].add(upd)), [s(64, 32), s(16, dtype=jnp.int32), s(16, 32)]
    if name == "dynamic_slice":
        return (lambda x: jax.lax.dynamic_slice_in_dim(x, 8, 16, axis=0) + jax.lax.dynamic_slice_in_dim(x, 0, 16, axis=0)), [s(64, 32)]
    if name == "concat_pad":
        return (lambda a, b: jnp.pad(jnp.concatenate([a, b], axis=0), ((0, 0), (0, 8)))), [s(32, 16), s(32, 16)]
    if name == "gather_rows":
        return (lambda table, ids: table[ids] * 2.0), [s(64, 32), s(16, dtype=jnp.int32)]
    if name == "train_step":
        def step(x, w1, w2):
            def loss(ws):
                return jnp.mean(jnp.square(jnp.tanh(x @ ws[0]) @ ws[1]))
            g = jax.grad(loss)((w1, w2))
            return w1 - 0.1 * g[0], w2 - 0.1 * g[1]
        return step, [s(64, 32), s(32, 64), s(64, 32)]
    raise ValueError(name)


def build(tname, layout, mesh):
    """The function and argument shapes of one program (mesh-dependent ones here)."""
    import jax
    import jax.numpy as jnp
    from jax.sharding import NamedSharding, PartitionSpec as P

    fn, shapes = template(tname)
    if fn is not None:
        return fn, shapes
    f32 = jnp.float32
    if tname == "shard_map_psum":
        axis = mesh.axis_names[0]
        try:
            shard_map = jax.shard_map
        except AttributeError:
            from jax.experimental.shard_map import shard_map

        inner = shard_map(lambda a: jax.lax.psum(a, axis), mesh=mesh,
                          in_specs=P(axis, None), out_specs=P(None, None))
        return (lambda x, w: jnp.tanh(inner(x @ w))), shapes
    if tname == "constraint":
        def f(x, w):
            h = x @ w
            h = jax.lax.with_sharding_constraint(h, NamedSharding(mesh, P(None, mesh.axis_names[-1])))
            return jnp.sin(h) @ w.T
        return f, shapes
    if tname == "reduce":
        ops = {"sum_sharded_dim": lambda x: jnp.sum(x, axis=0),
               "sum_other_dim": lambda x: jnp.sum(x * x, axis=1),
               "max_both": lambda x: jnp.max(x) + jnp.max(x, axis=0)}
        return ops[layout], shapes
    if tname == "reshape_transpose":
        ops = {"split_dim": (lambda x: jnp.reshape(x, (8, 8, 32)) * 2.0, [jax.ShapeDtypeStruct((64, 32), f32)]),
               "merge_dims": (lambda x: jnp.reshape(x, (64, 16)) + 1.0, [jax.ShapeDtypeStruct((8, 8, 16), f32)]),
               "transpose": (lambda x: jnp.transpose(x, (2, 0, 1)) * 3.0, [jax.ShapeDtypeStruct((8, 8, 16), f32)])}
        return ops[layout]
    if tname == "cumsum_sort":
        ops = {"cumsum_rows": lambda x: jnp.cumsum(x, axis=1), "sort_rows": lambda x: jnp.sort(x, axis=1)}
        return ops[layout], shapes
    raise ValueError(tname)


def make_mesh(name):
    import jax
    import numpy as np
    from jax.sharding import Mesh

    shape, axes = MESHES[name]
    return Mesh(np.array(jax.devices()[:8]).reshape(shape), axes)


def shardy_dumps(dump_dir):
    """Shardy's saved modules under an XLA dump folder: (before, after, all .mlir)."""
    every = sorted(glob.glob(os.path.join(dump_dir, "**", "*.mlir"), recursive=True))
    before = [p for p in every if "before_propagation" in os.path.basename(p)]
    after = [p for p in every if "after_propagation" in os.path.basename(p)]
    return before, after, every


def run_one(name, tname, layout, mesh_name, specs, out):
    import jax
    from jax.sharding import NamedSharding, PartitionSpec as P

    mesh = make_mesh(mesh_name)
    fn, shapes = build(tname, layout, mesh)
    fn.__name__ = name
    in_shardings = tuple(None if sp == "open" else NamedSharding(mesh, P(*sp)) for sp in specs)
    jitted = jax.jit(fn, in_shardings=in_shardings)
    lowered = jitted.lower(*shapes)
    write_text(os.path.join(out, name + ".jax.mlir"), lowered.as_text())
    dump = tempfile.mkdtemp(prefix="sdy-" + name + "-")
    t0 = time.perf_counter()
    try:
        compiled = lowered.compile(compiler_options={"xla_dump_to": dump})
        dump_via = "compiler_options"
    except Exception:
        compiled = lowered.compile()  # XLA_FLAGS' --xla_dump_to (session.sh sets it)
        dump_via = "XLA_FLAGS"
    seconds = time.perf_counter() - t0
    before, after, every = shardy_dumps(dump)
    if not (before and after):
        # The per-compile option was refused or had no effect: the session's
        # dump folder, this program's files by module name (jit_NAME, and
        # not jit_NAME_more).
        m = re.search(r"--xla_dump_to=(\S+)", os.environ.get("XLA_FLAGS", ""))
        if m:
            mine = re.compile(r"jit_" + re.escape(name) + r"(?!\w)")
            before, after, every = ([p for p in paths if mine.search(p)] for paths in shardy_dumps(m.group(1)))
            shutil.rmtree(dump, ignore_errors=True)
            dump, dump_via = m.group(1), "XLA_FLAGS"
    record = {"name": name, "template": tname, "layout": layout, "mesh": mesh_name,
              "mesh_shape": list(MESHES[mesh_name][0]), "axes": list(MESHES[mesh_name][1]),
              "in_specs": [sp if sp == "open" else [list(d) if isinstance(d, tuple) else d for d in sp] for sp in specs],
              "compile_s": seconds, "dump_via": dump_via,
              "input_shardings": [str(x) for x in jax.tree_util.tree_leaves(compiled.input_shardings)],
              "output_shardings": [str(x) for x in jax.tree_util.tree_leaves(compiled.output_shardings)]}
    if before and after:
        shutil.copyfile(before[-1], os.path.join(out, name + ".before_propagation.mlir"))
        shutil.copyfile(after[-1], os.path.join(out, name + ".after_propagation.mlir"))
        record["oracle"] = {"before": os.path.relpath(before[-1], dump), "after": os.path.relpath(after[-1], dump)}
    else:
        keep = os.path.join(out, name + ".dump")
        os.makedirs(keep, exist_ok=True)
        for p in every[:200]:
            shutil.copyfile(p, os.path.join(keep, os.path.relpath(p, dump).replace(os.sep, "__")))
        record["oracle"] = None
        record["oracle_missing"] = "no *before_propagation*/*after_propagation* .mlir in the XLA dump; %d .mlir kept under %s.dump/" % (len(every), name)
    if dump_via == "compiler_options":
        shutil.rmtree(dump, ignore_errors=True)
    write_json(os.path.join(out, name + ".json"), record)
    return record


def configure_jax():
    """8 CPU devices and Shardy, before any computation."""
    import jax

    options = [("jax_platforms", "cpu"), ("jax_use_shardy_partitioner", True)]
    if "xla_force_host_platform_device_count" not in os.environ.get("XLA_FLAGS", ""):
        options.append(("jax_num_cpu_devices", 8))  # one way of asking for 8, not both
    for key, value in options:
        try:
            jax.config.update(key, value)
        except (AttributeError, ValueError):
            pass  # an older or newer JAX without the option: XLA_FLAGS covers the devices
    n = len(jax.devices())
    if n < 8:
        raise SystemExit("sharded_programs.py: %d devices; run with XLA_FLAGS=--xla_force_host_platform_device_count=8 JAX_PLATFORMS=cpu" % n)
    return {"jax": jax.__version__, "devices": n, "platform": jax.devices()[0].platform,
            "shardy": bool(getattr(jax.config, "jax_use_shardy_partitioner", True))}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", help="directory for the module pairs")
    ap.add_argument("--only", help="only programs whose name matches this regular expression")
    ap.add_argument("--list", action="store_true", help="print the programs and exit (no JAX needed)")
    a = ap.parse_args()
    chosen = [p for p in programs() if not a.only or re.search(a.only, p[0])]
    if a.list:
        for name, tname, layout, mesh, specs in chosen:
            print("%-32s %-7s %s" % (name, mesh, specs))
        print("# %d programs" % len(chosen))
        return 0
    if not a.out:
        ap.error("--out is required (or --list)")
    os.makedirs(a.out, exist_ok=True)
    index = {"environment": configure_jax(), "programs": []}
    failed = 0
    for i, (name, tname, layout, mesh, specs) in enumerate(chosen, 1):
        try:
            r = run_one(name, tname, layout, mesh, specs, a.out)
            entry = {"name": name, "ok": True, "oracle": r["oracle"] is not None}
            print("[%d/%d] %-32s %s" % (i, len(chosen), name, "pair" if entry["oracle"] else "NO SHARDY DUMP"), file=sys.stderr, flush=True)
        except Exception as e:
            failed += 1
            entry = {"name": name, "ok": False, "error": "%s: %s" % (type(e).__name__, e), "traceback": traceback.format_exc()[-4000:]}
            print("[%d/%d] %-32s FAILED %s" % (i, len(chosen), name, entry["error"][:300]), file=sys.stderr, flush=True)
        index["programs"].append(entry)
        write_json(os.path.join(a.out, "sharded.json"), index)
    pairs = sum(1 for e in index["programs"] if e.get("oracle"))
    print("%d programs, %d pairs, %d failed" % (len(chosen), pairs, failed), file=sys.stderr)
    return 1 if failed or pairs == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
