// The playground entry points through the npm package: one update call,
// schedule with a Chrome trace, factor tables, device layouts and the
// trace; bad input comes back as values.
import test from "node:test";
import assert from "node:assert/strict";
import { sl, readExample } from "./helpers.mjs";

const hello = readExample("hello.mlir");
const lineOf = (text, needle) => text.split("\n").findIndex((l) => l.includes(needle)) + 1;

test("playground: diagnostics, output and schedule in one call", () => {
  const r = sl.playground(hello, { pipeline: "basic" });
  assert.equal(r.ok, true);
  assert.equal(r.stage, "done");
  assert.match(r.output, /stablehlo\.dot_general .*\{sdy\.sharding = #sdy\.sharding_per_value<\[<@mesh, \[\{"x", \?\}, \{"y", \?\}\]>\]>\}/);
  assert.ok(r.schedule.ok);
  assert.ok(r.schedule.report.step_time_us > 0);
  const bad = sl.playground(hello.replace('[{"x"}, {}]', '[{"q"}, {}]'));
  assert.equal(bad.ok, false);
  assert.equal(bad.stage, "verify");
  assert.ok(bad.diagnostics.some((d) => d.severity === "error" && d.line === lineOf(hello, "%arg0:")));
  assert.equal(sl.playground(hello, { pipeline: "nope" }).ok, false);
  assert.equal(sl.playground(42).ok, false);
});

test("playground: changes mark what the pipeline did; input only when asked", () => {
  const r = sl.playground(hello, { pipeline: "basic", schedule: false });
  assert.ok(r.input.includes("stablehlo.dot_general"));
  const lines = r.output.split("\n");
  const dot = lineOf(r.output, "stablehlo.dot_general");
  const change = r.changes.find((c) => c.line === dot);
  assert.ok(change && !change.inserted, JSON.stringify(r.changes));
  // The span is the sharding the dot gained (columns count UTF-16 units).
  assert.match(lines[dot - 1].slice(change.from, change.to), /^\{sdy\.sharding = #sdy\.sharding_per_value/);
  const lean = sl.playground(hello, { pipeline: "basic", schedule: false, input: false });
  assert.equal(lean.input, "");
  assert.deepEqual(lean.changes, r.changes);
  const inserted = sl.playground(readExample("playground/tensor_parallel_mlp.mlir"), { pipeline: "explicit", schedule: false });
  const reduce = lineOf(inserted.output, "sdy.all_reduce");
  assert.ok(inserted.changes.some((c) => c.line === reduce && c.inserted));
});

test("every playground pipeline runs on every example", () => {
  for (const name of ["hello.mlir", "schedule/dp_mlp.mlir", "playground/tensor_parallel_mlp.mlir",
    "playground/priorities.mlir", "playground/reshape_sub_axes.mlir", "playground/reduce_and_broadcast.mlir"]) {
    const text = readExample(name);
    for (const pipeline of ["basic", "aggressive", "op-priority", "user-priority", "pipeline", "explicit", "partition"]) {
      const r = sl.playground(text, { pipeline });
      assert.equal(r.ok, true, `${name} ${pipeline}: ${r.error} ${JSON.stringify(r.diagnostics)}`);
      assert.equal(r.schedule?.ok, true, `${name} ${pipeline}: ${r.schedule?.error}`);
    }
  }
  const tp = sl.playground(readExample("playground/tensor_parallel_mlp.mlir"), { pipeline: "explicit" });
  assert.match(tp.output, /sdy\.all_reduce \{"model"\}/);
});

test("the partition pipeline shows the per-device program the schedule estimates", () => {
  const text = readExample("playground/tensor_parallel_mlp.mlir");
  const explicit = sl.playground(text, { pipeline: "explicit" });
  const local = sl.playground(text, { pipeline: "partition" });
  assert.equal(local.ok, true, JSON.stringify(local.diagnostics));
  assert.doesNotMatch(local.output, /sdy\.all_reduce/);
  assert.match(local.output, /"stablehlo\.all_reduce"\(.*replica_groups = dense</);
  assert.equal(local.schedule.ok, true, local.schedule.error);
  assert.equal(local.schedule.report.step_time_us, explicit.schedule.report.step_time_us);
});

test("a module in GSPMD form is imported before propagation, and the schedule says so", () => {
  const text = readExample("playground/gspmd_tensor_parallel.mlir");
  const r = sl.playground(text, { pipeline: "explicit" });
  assert.equal(r.ok, true, JSON.stringify(r.diagnostics));
  assert.match(r.output, /sdy\.mesh @mesh = <\["_axis_0"=4\]>/);
  assert.match(r.output, /sdy\.all_reduce/);
  assert.equal(r.schedule.ok, true, r.schedule.error);
  assert.equal(r.input_form, "gspmd");
  assert.equal(r.schedule.report.topology.num_devices, 4);
  assert.equal(r.schedule.report.per_kind["all-reduce"].count, 1);
});

test("schedule: Chrome trace parses; a table changes the estimate", () => {
  const text = readExample("playground/tensor_parallel_mlp.mlir");
  const r = sl.schedule(text, { trace: true });
  assert.equal(r.ok, true);
  assert.ok(r.trace.traceEvents.length > 0);
  const table = JSON.parse(readExample("tables/h100_analytical.shardlab.json"));
  for (const c of table.collectives) {
    c.time_us.median *= 10;
    c.throughput_bytes_per_s /= 10;
  }
  const slow = sl.schedule(text, { table });
  assert.equal(slow.ok, true);
  assert.ok(slow.report.comm_us > r.report.comm_us * 2, `${slow.report.comm_us} vs ${r.report.comm_us}`);
  const bad = sl.schedule(text, { table: { format: "shardlab-perf-table", version: 1, collectives: [{}] } });
  assert.equal(bad.ok, false);
  assert.match(bad.error, /table/);
});

test("schedule: a table's fused_attention entry prices the cuDNN calls and says so", () => {
  const text = readExample("schedule/ring_attention.mlir");
  const table = JSON.parse(readExample("tables/h100_analytical.shardlab.json"));
  const calls = (report) => report.ops.filter((o) => /flash attention/.test(o.cost_explanation ?? ""));
  const said = (report) => report.assumptions.filter((a) => a.startsWith("fused attention: "));
  const plain = sl.schedule(text, { table });
  assert.equal(plain.ok, true, plain.error);
  assert.equal(calls(plain.report).length, 8);
  assert.match(said(plain.report)[0], /is not priced/);
  const priced = sl.schedule(text, {
    table: { ...table, fused_attention: { forward_slowdown: 2, backward_slowdown: 3, source: "the JS test" } },
  });
  assert.equal(priced.ok, true, priced.error);
  // Each call: its GEMMs' price times its factor, or its bytes' time when
  // that is longer (the explanation's two terms).
  for (const o of calls(priced.report)) {
    const m = /GEMM table ([\d.]+) us x ([\d.]+); memory ([\d.]+) us/.exec(o.cost_explanation);
    assert.ok(m, o.cost_explanation);
    const factor = /backward/.test(o.cost_explanation) ? 3 : 2;
    const want = Math.max(factor * Number(m[1]) * Number(m[2]), Number(m[3]));
    assert.ok(Math.abs(o.end_us - o.start_us - want) < 1e-3 * want, `${o.name}: ${o.end_us - o.start_us} us, want ${want}`);
  }
  assert.ok(priced.report.compute_us > plain.report.compute_us);
  assert.match(said(priced.report)[0], /times x2 \(forward\) and x3 \(backward\).*the JS test/);
});

test("factor table, device layout and trace by source position", () => {
  const f = sl.opFactors(hello, { line: lineOf(hello, "dot_general"), pipeline: "basic" });
  assert.equal(f.ok, true);
  assert.deepEqual(f.factors.map((x) => x.kind), ["pass-through", "pass-through", "reduction"]);
  assert.deepEqual(f.rows[2].after.factors[0].axes, ['"x"']);
  const l = sl.valueLayout(hello, { line: lineOf(hello, "stablehlo.add") });
  assert.equal(l.ok, true);
  assert.deepEqual(l.local_shape, [4, 16]);
  assert.equal(l.devices.length, 4);
  const t = sl.propagationTrace(hello, { pipeline: "basic" });
  assert.equal(t.ok, true);
  assert.equal(t.steps[0].op, "stablehlo.dot_general");
  assert.ok(t.steps[0].decisions.some((d) => d.axis === '"x"' && d.source === "operand 0"));
  assert.equal(sl.opFactors(hello, { line: 999 }).ok, false);
  assert.equal(sl.valueLayout(hello, {}).ok, false);
  assert.equal(sl.shardingReport(hello).ok, true);
});

test("schedule: a stream per link runs an NVLink all-reduce beside a network gather", () => {
  // 16 GPUs, 8 a node: the gathers over "dp" cross nodes, the all-reduce
  // over "tp" stays in one.
  const text = `sdy.mesh @mesh = <["dp"=2, "tp"=8]>
func.func @main(%a: tensor<8192x4096xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"dp"}, {}]>},
                %b: tensor<8192x4096xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"dp"}, {}]>},
                %c: tensor<4096x4096xf32>) -> (tensor<8192x4096xf32>, tensor<8192x4096xf32>, tensor<4096x4096xf32>) {
  %0 = sdy.all_gather [{"dp"}, {}] %a out_sharding=<@mesh, [{}, {}]> : tensor<8192x4096xf32>
  %1 = sdy.all_gather [{"dp"}, {}] %b out_sharding=<@mesh, [{}, {}]> : tensor<8192x4096xf32>
  %2 = sdy.all_reduce {"tp"} %c out_sharding=<@mesh, [{}, {}]> : tensor<4096x4096xf32>
  return %0, %1, %2 : tensor<8192x4096xf32>, tensor<8192x4096xf32>, tensor<4096x4096xf32>
}`;
  const one = sl.schedule(text, { pipeline: "none", preset: "h100", gpus_per_node: 8 });
  const two = sl.schedule(text, { pipeline: "none", preset: "h100", gpus_per_node: 8, stream_per_link: true });
  assert.equal(one.ok, true, one.error);
  assert.equal(two.ok, true, two.error);
  const streams = (r) => [...new Set(r.report.ops.filter((o) => o.kind === "collective").map((o) => o.stream))].sort();
  assert.deepEqual(streams(one), ["collective-0"]);
  assert.deepEqual(streams(two), ["collective-0", "collective-1"]);
  assert.ok(two.report.step_time_us < one.report.step_time_us,
            `${two.report.step_time_us} vs ${one.report.step_time_us}`);
  const bad = sl.schedule(text, { pipeline: "none", stream_per_link: "yes" });
  assert.equal(bad.ok, false);
  assert.match(bad.error, /stream_per_link/);
  // The validation band is that of the schedule the estimate was made with.
  const both = sl.schedule(text, { pipeline: "none", preset: "h100", gpus_per_node: 8, stream_per_link: true,
                                   pipeline_collectives: true });
  assert.equal(both.ok, true, both.error);
  assert.equal(one.report.validation.schedule, "XLA's default schedule");
  assert.equal(two.report.validation.schedule, "XLA's default schedule");
  assert.equal(both.report.validation.schedule, "--pipeline-collectives --stream-per-link");
});
