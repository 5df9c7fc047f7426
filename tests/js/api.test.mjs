// The npm package's API in Node: parse/verify with diagnostics as values,
// round-trip printing, passes by flag, tables and estimates, bad input.
import { test } from "node:test";
import assert from "node:assert/strict";
import { sl, load, MODULE, readExample } from "./helpers.mjs";

test("version and pass list", () => {
  const v = sl.version();
  assert.equal(v.name, "shardlab");
  assert.equal(v.api_version, 1);
  const passes = sl.passes();
  assert.ok(passes.length > 10);
  const basic = passes.find((p) => p.flag === "sdy-basic-propagate");
  assert.ok(basic && basic.implemented);
});

test("a deliberate syntax error is a diagnostic with line and column", () => {
  const bad = MODULE.replace("stablehlo.add %arg0,", "stablehlo.add %arg0 ");
  const r = sl.check(bad);
  assert.equal(r.ok, false);
  assert.equal(r.output, "");
  assert.ok(r.diagnostics.length >= 1);
  const [d] = r.diagnostics;
  assert.equal(d.severity, "error");
  assert.equal(d.line, 4);
  assert.ok(d.column > 1);
  assert.equal(typeof d.message, "string");
});

test("a verifier error (unknown mesh axis) is reported on its line", () => {
  const text = MODULE.replace('[{"x"}, {}]', '[{"z"}, {}]');
  const r = sl.check(text);
  assert.equal(r.ok, false);
  const [d] = r.diagnostics;
  assert.equal(d.line, 3);
  assert.match(d.message, /^'func\.func' op arg 0 - .*z/);
  // Reported at the func.func as MLIR does; its range is the argument it is
  // about, and the function is a related location.
  const line = text.split("\n")[2];
  const arg = '%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"z"}, {}]>}';
  const column = line.indexOf(arg) + 1;
  assert.deepEqual(d.range, { start: { line: 3, column }, end: { line: 3, column: column + arg.length } });
  assert.deepEqual(d.related, [{ line: 3, column: 1, message: "in function @main" }]);
});

test("a diagnostic without a range of its own covers the token at its position", () => {
  const r = sl.check(MODULE.replace("stablehlo.add %arg0, %arg0", "stablehlo.add %arg0, %nope"));
  const [d] = r.diagnostics;
  assert.equal(d.severity, "error");
  const width = d.range.end.column - d.range.start.column;
  assert.equal(d.range.start.line, d.line);
  assert.equal(d.range.start.column, d.column);
  assert.ok(width >= 1, JSON.stringify(d));
});

test("printing round-trips to a fixed point", () => {
  const once = sl.check(readExample("hello.mlir"));
  assert.equal(once.ok, true, JSON.stringify(once.diagnostics));
  assert.match(once.output, /stablehlo.dot_general/);
  const twice = sl.check(once.output);
  assert.equal(twice.output, once.output);
  // run() prints as shardlab-opt and sdy_opt do: an empty line after a module.
  assert.equal(sl.run(once.output).output, once.output + "\n");
});

test("texts cross the boundary intact: non-ASCII, a large module, and replies kept across calls", () => {
  // Multi-byte UTF-8 in an op name (printed as is) and comments: byte and JS
  // string lengths differ, so a length taken from the wrong one would cut it.
  const named = "// é 𝔸\n" + MODULE.replace("return %0",
    '"größe·λ→𝔸.op"() : () -> ()\n  return %0') + "// é 𝔸 end\n";
  const first = sl.run(named);
  assert.equal(first.ok, true, JSON.stringify(first.diagnostics));
  assert.match(first.output, /"größe·λ→𝔸\.op"\(\)/);
  // A second, larger call reuses the binding's reply buffer; the first reply
  // is a JS string already and must not change.
  const big = MODULE.replace("return %0", Array.from({ length: 3000 }, (_, i) =>
    `%a${i} = stablehlo.add %arg0, %arg0 : tensor<8x16xf32>\n  `).join("") + "return %0");
  const second = sl.check(big);
  assert.equal(second.ok, true, JSON.stringify(second.diagnostics));
  assert.equal((second.output.match(/stablehlo.add/g) ?? []).length, 3001);
  assert.match(first.output, /"größe·λ→𝔸\.op"\(\)/);
  // A lone surrogate (3 bytes as U+FFFD) and texts whose non-ASCII comes
  // only at the very end need more room than one byte per UTF-16 unit.
  assert.equal(sl.check("// \uD800\n" + MODULE).ok, true);
  const tail = sl.check(MODULE + "// " + "é".repeat(5000));
  assert.equal(tail.ok, true, JSON.stringify(tail.diagnostics));
  assert.equal(sl.check("").ok, true);
  // A diagnostic after multi-byte characters points at the right column.
  const bad = sl.check('// ü𝔸\nsdy.mesh @m = <["x"=2]>\nfunc.func @f() { %0 = bogus }');
  assert.equal(bad.ok, false);
  assert.equal(bad.diagnostics[0].line, 3);
});

test("a pass runs by its Shardy flag, with options", () => {
  const r = sl.run(MODULE, ["-sdy-basic-propagate=conservative-propagation=true"]);
  assert.equal(r.ok, true, r.stderr);
  // Propagation gives the add the operand's (open) sharding on "x".
  assert.ok(r.output.includes(
    'stablehlo.add %arg0, %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x", ?}, {?}]>]>}'),
    r.output);
  assert.equal(r.stderr, "");
});

test("split input keeps the file's line numbers in diagnostics and stderr", () => {
  const text = `${MODULE}// -----\nfunc.func @f() {\n  return %x\n}\n`;
  const r = sl.run(text, ["-split-input-file", "in.mlir"]);
  assert.equal(r.ok, false);
  assert.equal(r.diagnostics[0].line, 9);
  assert.match(r.stderr, /^in\.mlir:9:/);
  assert.ok(r.output.includes("// -----\n"));
});

test("unknown flags and bad arguments are error values", () => {
  const unknown = sl.run(MODULE, ["-no-such-pass"]);
  assert.equal(unknown.ok, false);
  assert.match(unknown.error, /no-such-pass/);
  assert.equal(sl.run(MODULE, ["-o", "x"]).ok, false);
  assert.equal(sl.run(MODULE, "-sdy-basic-propagate").ok, false);
  assert.equal(sl.run(42).ok, false);
  assert.equal(sl.check(undefined).ok, false);
});

test("an unknown or mistyped pass option is an error naming the options", () => {
  const unknown = sl.run(MODULE, ["-sdy-basic-propagate=no-such-option=true"]);
  assert.equal(unknown.ok, false);
  assert.match(unknown.error,
    /^pass '-sdy-basic-propagate' has no option 'no-such-option'; its options: keep-sharding-rules \(bool\)/);
  const typed = sl.run(MODULE, ["-sdy-aggressive-propagate=propagation-strategy=fast"]);
  assert.equal(typed.ok, false);
  assert.match(typed.error, /takes one of basic,aggressive,basic-then-aggressive, not 'fast'/);
  const aggressive = sl.passes().find((p) => p.flag === "sdy-aggressive-propagate");
  assert.equal(aggressive.stage, "propagation");
  assert.deepEqual(aggressive.options.map((o) => o.name).slice(-1), ["propagation-strategy"]);
});

// A sharding group that crosses a manual computation: the import pass refuses it.
const CROSSING_GROUP = `sdy.mesh @mesh = <["a"=2, "b"=2]>

func.func @main(%arg0: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{?}, {?}]>] out_shardings=[<@mesh, [{?}, {?}]>] manual_axes={} (%arg1: tensor<8x8xf32>) {
    %1 = stablehlo.add %arg1, %arg1 : tensor<8x8xf32>
    sdy.sharding_group %1 group_id = 7 : tensor<8x8xf32>
    sdy.return %1 : tensor<8x8xf32>
  } : (tensor<8x8xf32>) -> tensor<8x8xf32>
  sdy.sharding_group %0 group_id = 7 : tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}
`;

test("a failing pass is an error value, not a crash", () => {
  const r = sl.run(CROSSING_GROUP, ["-sdy-sharding-group-import"]);
  assert.equal(r.ok, false);
  assert.equal(r.output, "");
  assert.equal(r.diagnostics[0].severity, "error");
  assert.equal(r.diagnostics[0].line, 9);
  assert.match(r.diagnostics[0].message, /cannot cross ManualComputationOp boundaries for groupId: 7/);
  // Passes still declared only (none once all are implemented) fail the same way.
  for (const p of sl.passes().filter((p) => !p.implemented)) {
    const u = sl.run(MODULE, [`-${p.flag}`]);
    assert.equal(u.ok, false, p.flag);
    assert.match(u.diagnostics[0].message, /not implemented/);
  }
});

test("tables load, validate and summarise", () => {
  const r = sl.loadTable(readExample("tables/h100_analytical.shardlab.json"));
  assert.equal(r.ok, true);
  assert.equal(r.format, "shardlab");
  assert.equal(r.summary.source, "analytical");
  assert.ok(r.summary.collectives > 0 && r.summary.gemms > 0);
  assert.equal(r.table.format, "shardlab-perf-table");
  const bad = sl.loadTable('{"format":"shardlab-perf-table","version":99}');
  assert.equal(bad.ok, false);
  assert.match(bad.error, /version/);
  assert.equal(sl.loadTable("entries {").ok, false);
  assert.equal(sl.loadTable("{}", { format: "csv" }).ok, false);
});

test("a collective estimate explains itself and follows the table", () => {
  const table = sl.loadTable(readExample("tables/h100_analytical.shardlab.json"));
  assert.equal(table.ok, true);
  const opts = { op: "all-reduce", bytes: 1 << 20, dtype: "f32", replica_groups: "[1,8]<=[8]" };
  const fromTable = sl.estimateCollective({ ...opts, table: table.table });
  assert.equal(fromTable.ok, true, fromTable.error);
  assert.ok(fromTable.time_us > 0);
  assert.match(fromTable.model, /^collective-table/);
  assert.ok(Array.isArray(fromTable.explanation.terms));
  const analytical = sl.estimateCollective(opts);
  assert.equal(analytical.ok, true);
  const bigger = sl.estimateCollective({ ...opts, bytes: 1 << 26 });
  assert.ok(bigger.time_us > analytical.time_us);
  const bad = sl.estimateCollective({ op: "all-sum", bytes: 1 });
  assert.equal(bad.ok, false);
  assert.match(bad.error, /op/);
});

test("a GEMM estimate grows with the problem", () => {
  const small = sl.estimateGemm({ m: 1024, k: 1024, n: 1024, dtype: "bf16" });
  const large = sl.estimateGemm({ m: 4096, k: 1024, n: 1024, dtype: "bf16" });
  assert.equal(small.ok, true, small.error);
  assert.ok(large.time_us > small.time_us);
  assert.equal(sl.estimateGemm({ m: 1, k: 1 }).ok, false);
  assert.ok(sl.hardwarePresets().some((p) => p.name === "h100"));
});

test("no exception escapes for garbage input", () => {
  let seed = 12345;
  const rand = () => ((seed = (seed * 1103515245 + 12345) >>> 0) % 1000) / 1000;
  const alphabet = 'abcxyz{}[]()<>%@#",:=-!^ \n\t\\/0123456789\u00e9\ud83d\ude00';
  const samples = [
    "", "{", "}}}}", "\0\0\0", "func.func", "sdy.mesh @m = <[\"x\"=0]>",
    "x".repeat(10000), "[".repeat(5000), MODULE.slice(0, 120),
  ];
  for (let i = 0; i < 200; ++i) {
    let s = "";
    const n = Math.floor(rand() * 200);
    for (let j = 0; j < n; ++j) s += alphabet[Math.floor(rand() * alphabet.length)];
    samples.push(s);
  }
  for (const s of samples) {
    assert.doesNotThrow(() => {
      assert.equal(typeof sl.check(s).ok, "boolean");
      assert.equal(typeof sl.run(s, ["-sdy-basic-propagate"]).ok, "boolean");
      assert.equal(typeof sl.loadTable(s).ok, "boolean");
      assert.equal(typeof sl.estimateCollective({ op: s, bytes: 1 }).ok, "boolean");
    });
  }
  for (const junk of [null, 1, [], "x", { bytes: "1" }, { op: "all-reduce", bytes: 1e300 }])
    assert.equal(sl.estimateCollective(junk).ok, false);
  // The instance still works afterwards.
  assert.equal(sl.check(MODULE).ok, true);
});

test("separate instances are independent", async () => {
  const other = await load();
  assert.equal(other.check(MODULE).output, sl.check(MODULE).output);
});

test("the package README's example runs", async () => {
  const { execFileSync } = await import("node:child_process");
  const fs = await import("node:fs");
  const os = await import("node:os");
  const path = await import("node:path");
  const { ROOT, DIST } = await import("./helpers.mjs");
  const readme = fs.readFileSync(path.join(ROOT, "wasm", "README.md"), "utf8");
  const code = readme.match(/```js\n([\s\S]*?)```/)[1];
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "shardlab-readme-"));
  const file = path.join(dir, "example.mjs");
  fs.writeFileSync(file, code.replace('"shardlab"', JSON.stringify(path.join(DIST, "index.js"))));
  try {
    const out = execFileSync("node", [file], { encoding: "utf8" });
    assert.match(out, /sdy\.sharding/);
    assert.match(out, /^\d+(\.\d+)?$/m); // the estimate in microseconds
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test("parseShardings / printShardings: the core's sharding and mesh syntax as values, round trip", () => {
  const body = '<@mesh, [{"x", ?}p1, {"y":(1)2}], replicated={"z"}, unreduced=max{"w"}>';
  const r = sl.parseShardings({ shardings: [body, "<@mesh, [{"], meshes: ['<["x"=2, "y"=4]>'] });
  assert.equal(r.ok, true);
  const [good, bad] = r.shardings;
  assert.equal(good.ok, true);
  assert.deepEqual(good.sharding, {
    mesh: { symbol: "mesh" },
    dims: [
      { axes: [{ name: "x" }], closed: false, priority: 1 },
      { axes: [{ name: "y", sub: { pre_size: 1, size: 2 } }], closed: true },
    ],
    replicated: [{ name: "z" }],
    unreduced: [{ name: "w" }],
    unreduced_kind: "max",
  });
  assert.equal(bad.ok, false);
  assert.match(bad.error, /expected/);
  assert.deepEqual(r.meshes[0], { ok: true, mesh: { axes: [{ name: "x", size: 2 }, { name: "y", size: 4 }], device_ids: [] } });
  const printed = sl.printShardings({ shardings: [good.sharding], meshes: [r.meshes[0].mesh] });
  assert.deepEqual(printed, { ok: true, shardings: [body], meshes: ['<["x"=2, "y"=4]>'] });
  const inline = sl.printShardings({ shardings: [{ ...good.sharding, mesh: { inline: { axes: [{ name: "x", size: 2 }], device_ids: [] } } }] });
  assert.match(inline.shardings[0], /^<mesh<\["x"=2\]>, \[/);
  assert.match(sl.printShardings({ shardings: [{ mesh: { symbol: "m" }, dims: [{ axes: [{ name: "" }], closed: true }] }] }).error, /shardings\[0\]: an axis/);
  assert.match(sl.parseShardings({ sharding: [] }).error, /unknown field 'sharding'/);
});

test("dataflowGraph: arguments, ops, the explicit collective, values with their shardings", () => {
  const g = sl.dataflowGraph(readExample("playground/tensor_parallel_mlp.mlir"), { pipeline: "explicit" });
  assert.equal(g.ok, true, g.error);
  assert.equal(g.function, "main");
  const kinds = g.nodes.map((n) => n.kind);
  assert.ok(kinds.includes("argument") && kinds.includes("op") && kinds.includes("output"));
  assert.deepEqual(g.nodes.filter((n) => n.kind === "argument").map((n) => n.name), ["%x", "%w1", "%w2"]);
  const collective = g.nodes.find((n) => n.kind === "collective");
  assert.ok(collective, JSON.stringify(g.nodes.map((n) => n.name)));
  assert.match(collective.name, /all_reduce/);
  assert.ok(collective.line > 0);
  // Every edge joins two nodes, in program order, and sharded values say how.
  for (const e of g.edges) assert.ok(e.from < e.to && e.to < g.nodes.length);
  assert.ok(g.edges.some((e) => /@mesh/.test(e.sharding)));
  assert.ok(!g.nodes.some((n) => n.name === "stablehlo.constant"));
  assert.equal(g.truncated, false);
  assert.match(sl.dataflowGraph("func.func @main(", {}).error ?? "", /./);
  assert.match(sl.dataflowGraph(MODULE, { pipeline: "nope" }).error, /pipeline/);
});

test("strings of every length and alignment survive the round trip (the WASM memcpy)", () => {
  // The WASM build has its own memcpy (wasm/src/memcpy.cpp) with separate
  // paths for 0-3, 4-7, 8-16 and longer copies: attribute strings of 0 to
  // 70 characters, behind names of varying length, go through parsing,
  // printing and the JSON reply.
  const lengths = Array.from({ length: 71 }, (_, n) => n);
  const text = (n) => Array.from({ length: n }, (_, i) => "abcdefghijklmnopqrstuvwxyz"[(i * 7 + n) % 26]).join("");
  const funcs = lengths.map((n) =>
    `func.func private @f${"x".repeat(n % 5)}${n}() attributes {s = "${text(n)}"}`);
  const r = sl.check(funcs.join("\n"));
  assert.equal(r.ok, true, JSON.stringify(r.diagnostics));
  for (const n of lengths)
    assert.ok(r.output.includes(`@f${"x".repeat(n % 5)}${n}() attributes {s = "${text(n)}"}`), `length ${n}`);
});

test("attribute names that differ at every position sort as bytes (the WASM memcmp)", () => {
  // The WASM build has its own memcmp (wasm/src/memcmp.cpp), 8 bytes at a
  // time and then byte by byte: names sharing a prefix of 0 to 20 bytes and
  // differing in the next one (in either order of writing, and by a byte
  // above 0x7f) must print in MLIR's sorted order.
  for (let shared = 0; shared <= 20; ++shared) {
    const prefix = "p".repeat(shared);
    const names = [`${prefix}b`, `${prefix}a`, `${prefix}bz`, `${prefix}a0`, `"${prefix}\u00e9"`];
    const r = sl.check(`func.func private @f() attributes {${names.map((n, i) => `${n} = ${i}`).join(", ")}}`);
    assert.equal(r.ok, true, JSON.stringify(r.diagnostics));
    const start = r.output.indexOf("attributes {") + "attributes {".length;
    const printed = r.output.slice(start, r.output.indexOf("}", start));
    const order = printed.split(", ").map((entry) => entry.split(" = ")[0]);
    // é is two bytes, C3 A9, which the printer escapes.
    assert.deepEqual(order, [`${prefix}a`, `${prefix}a0`, `${prefix}b`, `${prefix}bz`, `"${prefix}\\C3\\A9"`], `shared ${shared}`);
  }
});

test("float constants written as bits keep them through the WASM build", () => {
  // Infinities and NaNs are spelled by their bits; float <-> double
  // conversions in WebAssembly must keep the NaN payloads.
  const constants = [
    ["0xFF800000", "tensor<f32>"], ["0x7FC00001", "tensor<f32>"], ["0xFF80", "tensor<bf16>"],
    ["0x7FFF", "tensor<bf16>"], ["0x7E01", "tensor<f16>"], ["0xFFF0000000000000", "tensor<f64>"],
  ];
  const body = constants.map(([bits, type], i) => `  %c${i} = stablehlo.constant dense<${bits}> : ${type}`).join("\n");
  const r = sl.check(`func.func @f() {\n${body}\n  return\n}\n`);
  assert.equal(r.ok, true, JSON.stringify(r.diagnostics));
  for (const [bits, type] of constants)
    assert.ok(r.output.includes(`dense<${bits}> : ${type}`), `${bits} : ${type}\n${r.output}`);
});
