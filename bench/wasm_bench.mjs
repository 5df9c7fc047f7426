// WebAssembly package timings: instantiate (load), and check (parse + verify
// + print) on a generated module, best of N; native shardlab-opt on the same
// file for the ratio when a binary is given.
//   node bench/wasm_bench.mjs [--ops 10000] [--opt build/shardlab-opt]
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const args = process.argv.slice(2);
const arg = (name, fallback) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : fallback;
};
const ops = Number(arg("--ops", "10000"));
const opt = arg("--opt", "");
const runs = 3;

const best = (fn) => {
  let min = Infinity;
  for (let i = 0; i < runs; ++i) {
    const t0 = performance.now();
    fn();
    min = Math.min(min, performance.now() - t0);
  }
  return min;
};

const mjs = path.join(ROOT, "wasm", "dist", "shardlab.mjs");
const t0 = performance.now();
const { load } = await import(path.join(ROOT, "wasm", "dist", "index.js"));
const sl = await load();
const firstLoadMs = performance.now() - t0;
const loadMs = Math.min(...(await Promise.all([0, 1, 2].map(async () => {
  const t = performance.now();
  await load();
  return performance.now() - t;
}))));

const file = path.join(os.tmpdir(), `shardlab-bench-${ops}.mlir`);
execFileSync("python3", [path.join(ROOT, "bench", "gen_module.py"), "--ops", String(ops), "-o", file]);
const text = fs.readFileSync(file, "utf8");
let result;
const wasmMs = best(() => { result = sl.check(text); });
if (!result.ok) throw new Error(`check failed: ${JSON.stringify(result.diagnostics.slice(0, 3))}`);
const hello = fs.readFileSync(path.join(ROOT, "examples", "hello.mlir"), "utf8");
const helloMs = best(() => sl.check(hello));

const report = {
  mjs_bytes: fs.statSync(mjs).size,
  first_import_and_load_ms: +firstLoadMs.toFixed(1),
  load_ms: +loadMs.toFixed(1),
  hello_check_ms: +helloMs.toFixed(3),
  module_bytes: text.length,
  check_ms: +wasmMs.toFixed(1),
  check_mb_per_s: +(text.length / 1e6 / (wasmMs / 1e3)).toFixed(1),
  heap_bytes: sl.memoryBytes(),
};
// Robustness: 10,000 malformed and 10,000 valid calls in one instance.
const heapBefore = sl.memoryBytes();
let rejected = 0, valid = 0;
for (let i = 0; i < 10000; ++i) {
  // A cut of the module plus junk (inside a comment line it still parses).
  const junk = hello.slice(0, (i * 7919) % hello.length) + "\n{%@".repeat(1 + (i % 5));
  if (!sl.check(junk).ok) rejected++;
  if (sl.run(hello, ["-sdy-basic-propagate"]).ok) valid++;
}
report.robustness = { malformed_calls: 10000, malformed_rejected: rejected,
  valid_calls: 10000, valid_ok: valid, heap_before: heapBefore, heap_after: sl.memoryBytes() };
if (opt) {
  const nativeMs = best(() => execFileSync(opt, [file], { maxBuffer: 1 << 30 }));
  report.native_opt_ms = +nativeMs.toFixed(1);
  report.wasm_over_native = +(wasmMs / nativeMs).toFixed(2);
}
console.log(JSON.stringify(report, null, 2));
fs.rmSync(file);
