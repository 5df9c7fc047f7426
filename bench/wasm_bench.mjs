// WebAssembly package timings: instantiate (load), and check (parse + verify
// + print) on a generated module, best of N; native shardlab-opt on the same
// file for the ratio when a binary is given.
//   node bench/wasm_bench.mjs [--ops 10000] [--opt build/shardlab-opt]
//                             [--native build/bench_api] [--repeats 3]
//                             [--dist wasm/dist]
// With --native (bench/bench_api.cpp), the WASM / native table: the same
// JSON API calls (check, the propagation passes, the schedule) on the same
// generated modules, in-process on both sides, side by side (native and
// WASM alternate per case), best of N in wall and in process CPU time (on
// a shared machine CPU time leaves out the time others got).
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
const native = arg("--native", "");
const runs = Number(arg("--repeats", "3"));

const best = (fn) => {
  let min = Infinity;
  for (let i = 0; i < runs; ++i) {
    const t0 = performance.now();
    fn();
    min = Math.min(min, performance.now() - t0);
  }
  return min;
};

// --dist: another build of the package's dist/ (index.js + shardlab.mjs),
// e.g. one with SHARDLAB_WASM_EXCEPTIONS=js, to compare.
const dist = path.resolve(arg("--dist", path.join(ROOT, "wasm", "dist")));
const mjs = path.join(dist, "shardlab.mjs");
const t0 = performance.now();
const { load } = await import(path.join(dist, "index.js"));
const sl = await load();
const firstLoadMs = performance.now() - t0;
// The raw Embind module under the typed API, for the ratio table.
const raw = await (await import(mjs)).default();
const { callWithText } = await import(path.join(dist, "boundary.js"));
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
if (native) report.ratio = ratioTable();
console.log(JSON.stringify(report, null, 2));
fs.rmSync(file);

/** Best wall and CPU ms of `runs` calls of fn; its last reply too. */
function bestOf(fn) {
  let wall = Infinity, cpu = Infinity, reply;
  for (let i = 0; i < runs; ++i) {
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    reply = fn();
    wall = Math.min(wall, performance.now() - t0);
    const c = process.cpuUsage(c0);
    cpu = Math.min(cpu, (c.user + c.system) / 1e3);
  }
  return { wall, cpu, reply };
}

function generate(name, genArgs, edit = (t) => t) {
  const out = path.join(os.tmpdir(), `shardlab-ratio-${name}.mlir`);
  execFileSync("python3", [path.join(ROOT, "bench", "gen_module.py"), ...genArgs, "-o", out]);
  fs.writeFileSync(out, edit(fs.readFileSync(out, "utf8")));
  return out;
}

/** The WASM / native table over the propagation and scheduler cases. */
function ratioTable() {
  const m10k = file;
  const m2k = generate("2k", ["--ops", "2000"]);
  // One function named main (the schedule's entry), ~1.3k ops.
  const main = generate("main", ["--ops", "1200", "--layers-per-func", "40"],
    (t) => t.replaceAll("@block_0", "@main"));
  // The scheduler alone: the module already lowered to explicit collectives.
  const lowered = sl.schedule(fs.readFileSync(main, "utf8"), {});
  const explicit = path.join(os.tmpdir(), "shardlab-ratio-explicit.mlir");
  fs.writeFileSync(explicit, lowered.explicit_module ?? "");
  const cases = [
    ["parse + verify + print, 10k ops", m10k, "check", null],
    ["op-priority propagation (bench_propagation's stack), 10k ops", m10k, "run", ["-sdy-op-priority-propagate"]],
    ["-sdy-propagation-pipeline, 10k ops", m10k, "run", ["-sdy-propagation-pipeline"]],
    ["-sdy-propagation-pipeline, 2k ops", m2k, "run", ["-sdy-propagation-pipeline"]],
    ["schedule only (explicit module, pipeline none)", explicit, "schedule", { pipeline: "none" }],
    ["schedule with propagation + explicit collectives", main, "schedule", {}],
    ["playground update (2k ops, full pipeline, no schedule)", m2k, "playground", { pipeline: "pipeline", schedule: false, input: false }],
  ];
  const rows = [];
  for (const [name, input, call, argument] of cases) {
    const text = fs.readFileSync(input, "utf8");
    const nativeArgs = ["--repeats", String(runs), input, call];
    if (argument) nativeArgs.push(JSON.stringify(argument));
    if (!text) {
      rows.push({ case: name, error: `no input: ${lowered.error}` });
      continue;
    }
    const n = JSON.parse(execFileSync(native, nativeArgs, { maxBuffer: 1 << 30 }).toString());
    // The typed API first: it turns a trap into an error value.
    const w = bestOf(() => argument ? sl[call](text, argument) : sl[call](text));
    if (!n.ok || !w.reply.ok) {
      rows.push({ case: name, error: `native ok ${n.ok}, wasm: ${w.reply.error ?? "not ok"}` });
      continue;
    }
    // The raw Embind function: the C++ call bench_api times, plus the
    // text's and reply's copies in and out (boundary.ts; the typed API also
    // JSON.parses the reply).
    const r = bestOf(() => callWithText(raw, call, text, argument ? JSON.stringify(argument) : undefined));
    rows.push({
      case: name, bytes: text.length, reply_bytes: n.reply_bytes,
      native_ms: n.ms, native_cpu_ms: n.cpu_ms,
      raw_ms: +r.wall.toFixed(1), raw_cpu_ms: +r.cpu.toFixed(1),
      api_ms: +w.wall.toFixed(1), api_cpu_ms: +w.cpu.toFixed(1),
      ratio_cpu: +(r.cpu / n.cpu_ms).toFixed(2), ratio_wall: +(r.wall / n.ms).toFixed(2),
      api_ratio_cpu: +(w.cpu / n.cpu_ms).toFixed(2),
    });
  }
  for (const f of [m2k, main, explicit]) fs.rmSync(f);
  console.log("| case | native cpu (wall) ms | WASM cpu (wall) ms | WASM / native, cpu (wall) | typed API cpu ms (ratio) |");
  console.log("|---|---|---|---|---|");
  for (const r of rows)
    if (r.error) console.log(`| ${r.case} | | failed: ${r.error} | | |`);
    else console.log(`| ${r.case} | ${r.native_cpu_ms.toFixed(1)} (${r.native_ms.toFixed(1)}) | ${r.raw_cpu_ms} (${r.raw_ms}) | ` +
      `**${r.ratio_cpu}** (${r.ratio_wall}) | ${r.api_cpu_ms} (${r.api_ratio_cpu}) |`);
  return rows;
}
