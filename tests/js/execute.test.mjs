// execute: the interpreter through the package, against the truths the
// native checks use: a JAX-exported module's own check.* values (JAX
// computed them), the global run for a partitioned one, and native
// shardlab-run's verdict on the same module and seed.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { spawnSync } from "node:child_process";
import { sl, ROOT, SHARED, missingDataAllowed, readExample } from "./helpers.mjs";

const CORPUS = path.join(SHARED, "corpus", "stablehlo-testdata");
const RUN = path.join(ROOT, "build", "shardlab-run");
const missing = [CORPUS, RUN].filter((p) => !fs.existsSync(p));
const skip = missing.length && missingDataAllowed() ? `NOT RUN: missing ${missing.join(", ")}` : false;

// Small modules of different kinds: elementwise, a reduction, a dot.
const MODULES = [
  "abs_float16_20_20.mlir",
  "reduce_max_int32_2_3.mlir",
  "dot_general_float32_4_3_float64_3_6.mlir",
];

test("a JAX-exported module's own checks pass, and partitioned runs match as natively", { skip }, () => {
  assert.deepEqual(missing, [], `missing: ${missing.join(", ")}`);
  const files = MODULES.filter((m) => fs.existsSync(path.join(CORPUS, m)));
  assert.equal(files.length, MODULES.length, "expected corpus modules are missing");
  for (const name of files) {
    const file = path.join(CORPUS, name);
    const text = fs.readFileSync(file, "utf8");
    const global = sl.execute(text);
    assert.equal(global.ok, true, `${name}: ${global.error}`);
    assert.ok(global.checks.length >= 1, `${name}: no checks ran`);
    assert.equal(global.checks_passed, global.checks.length, name);
    for (const seed of [1, 2]) {
      const wasm = sl.execute(text, { shardings: `random:${seed}` });
      const native = spawnSync(RUN, ["--shardings", `random:${seed}`, file], { encoding: "utf8" });
      const nativeLine = native.stdout.split("\n").find((l) => l.startsWith("partitioned on "));
      assert.ok(nativeLine, `${name}: ${native.stdout}${native.stderr}`);
      // Same mesh, same device count, same verdict as the native build.
      assert.equal(nativeLine.startsWith(`partitioned on ${wasm.partition.devices} devices: ${wasm.partition.status}`), true,
        `${name} seed ${seed}: native "${nativeLine}", wasm ${JSON.stringify(wasm.partition)}`);
      assert.ok(native.stdout.includes(`mesh ${wasm.partition.mesh}`), `${name} seed ${seed}: mesh differs`);
      assert.equal(wasm.ok, native.status === 0, `${name} seed ${seed}`);
    }
  }
});

test("the playground example's devices hold partial row sums before the all-reduce and the whole sums after", () => {
  const text = readExample("playground/reduce_and_broadcast.mlir");
  const r = sl.execute(text, { shardings: "module", collectives: true, max_elements: 4096 });
  assert.equal(r.partition.status, "match", r.error);
  assert.equal(r.partition.devices, 4);
  const reduce = r.collectives.find((s) => s.op === "stablehlo.all_reduce");
  assert.ok(reduce, `no all_reduce among ${r.collectives.map((s) => s.op)}`);
  // It comes from the reduce over the sharded dimension (line 8).
  assert.equal(text.split("\n")[reduce.line - 1].includes("stablehlo.reduce"), true);
  assert.equal(reduce.devices.length, 4);
  const before = reduce.devices.map((d) => d.before[0].values);
  const after = reduce.devices.map((d) => d.after[0].values);
  assert.equal(before[0].length, 128);
  for (let i = 0; i < 128; ++i) {
    const sum = before.reduce((acc, v) => acc + v[i], 0);
    for (const a of after) assert.ok(Math.abs(a[i] - sum) <= 1e-4 * Math.max(1, Math.abs(sum)), `row ${i}: ${a[i]} vs ${sum}`);
  }
  // Each device's partial sums are its own quarter of the columns: they differ.
  assert.notDeepEqual(before[0], before[1]);
});

test("bad requests and garbage are values", () => {
  assert.equal(sl.execute("func.func @main( {").ok, false);
  assert.ok(sl.execute("func.func @main( {").diagnostics.length > 0);
  assert.equal(sl.execute("", { shardings: "everywhere" }).ok, false);
  assert.equal(sl.execute("", { devices: 0 }).ok, false);
  assert.equal(sl.execute("", { nonsense: true }).ok, false);
  for (const junk of ["", "}", "x".repeat(1000), "func.func @main() -> () {\n return\n}"])
    assert.equal(typeof sl.execute(junk, { shardings: "random:1" }).ok, "boolean");
  // A module that runs, after garbage: the instance still works.
  const ok = sl.execute("func.func @main() -> tensor<2xi32> {\n  %x = stablehlo.iota dim = 0 : tensor<2xi32>\n  return %x : tensor<2xi32>\n}\n");
  assert.deepEqual(ok.results[0].values, [0, 1]);
});
