// The JSON contract: schemas/api/ is the source of every request and reply
// shape. The TypeScript types are generated from it (and must be current),
// and every reply the core gives on the examples matches its schema (the
// instances of helpers.mjs check each reply; this file calls every method
// on every example).
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { sl, ROOT } from "./helpers.mjs";
import { checkReply, replyValidators } from "./schemas.mjs";

const { generate } = await import(path.join(ROOT, "scripts", "gen-api-types.mjs"));

test("wasm/src/api-types.ts is what scripts/gen-api-types.mjs generates from the schemas", async () => {
  const committed = fs.readFileSync(path.join(ROOT, "wasm", "src", "api-types.ts"), "utf8");
  const fresh = await generate();
  assert.ok(
    committed === fresh,
    "wasm/src/api-types.ts is stale: run node scripts/gen-api-types.mjs > wasm/src/api-types.ts",
  );
});

test("every method of the instance has a schema, and every schema'd method exists", () => {
  const methods = Object.keys(sl).sort();
  assert.deepEqual(methods, [...replyValidators.keys()].sort());
});

test("a reply that breaks its schema is caught", () => {
  assert.throws(() => checkReply("check", { ok: true, output: "" }), /diagnostics/);
  assert.throws(() => checkReply("version", { ok: true, name: "shardlab", version: "1", api_version: 1, extra: 1 }), /additional/);
});

function examples() {
  const out = [];
  for (const dir of ["examples", "examples/playground", "examples/schedule"])
    for (const name of fs.readdirSync(path.join(ROOT, dir)).sort())
      if (name.endsWith(".mlir")) out.push(path.join(dir, name));
  return out;
}

/** The first line holding an op (`= `) and the first func argument line. */
function positions(text) {
  const lines = text.split("\n");
  const op = lines.findIndex((l) => /%\w+(:\d+)? = /.test(l)) + 1;
  const arg = lines.findIndex((l) => /func\.func @main\(%/.test(l)) + 1;
  return { op, arg, argColumn: arg ? lines[arg - 1].indexOf("%") + 1 : 0 };
}

for (const example of examples()) {
  test(`every module method's reply on ${example} matches its schema`, () => {
    const text = fs.readFileSync(path.join(ROOT, example), "utf8");
    assert.equal(sl.check(text).ok, true, example);
    sl.run(text, ["-sdy-propagation-pipeline"]);
    sl.run(text, ["-sdy-no-such-pass"]);
    for (const pipeline of ["basic", "explicit"]) sl.playground(text, { pipeline });
    sl.schedule(text, { trace: true });
    sl.shardingReport(text);
    const { op, arg, argColumn } = positions(text);
    if (op) sl.opFactors(text, { line: op });
    if (arg) {
      sl.valueLayout(text, { line: arg, column: argColumn });
      sl.valueLayout(text, { line: arg, column: argColumn, before: true });
    }
    sl.propagationTrace(text, { pipeline: "pipeline" });
  });
}

test("the module-free methods' replies match their schemas", () => {
  sl.version();
  sl.memoryBytes();
  assert.ok(sl.passes().length > 50);
  assert.ok(sl.hardwarePresets().length > 0);
  const table = fs.readFileSync(path.join(ROOT, "examples", "tables", "h100_analytical.shardlab.json"), "utf8");
  assert.equal(sl.loadTable(table).ok, true);
  assert.equal(sl.loadTable("{").ok, false);
  assert.equal(sl.estimateCollective({ op: "all-gather", bytes: 1 << 20, replica_groups: "[1,8]<=[8]" }).ok, true);
  assert.equal(sl.estimateCollective({ op: "all-gather", bytes: 1 << 20, group_size: 8, nodes: 2 }).ok, true);
  assert.equal(sl.estimateGemm({ m: 1024, k: 1024, n: 1024 }).ok, true);
  assert.equal(sl.estimateGemm({ m: -1, k: 1, n: 1 }).ok, false);
});

test("failures on bad input match their schemas too", () => {
  const bad = "func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {\n  return %nope : tensor<8xf32>\n}\n";
  assert.equal(sl.check(bad).ok, false);
  assert.equal(sl.playground(bad).ok, false);
  assert.equal(sl.schedule(bad).ok, false);
  assert.equal(sl.opFactors(bad, { line: 2 }).ok, false);
  assert.equal(sl.valueLayout(bad, { line: 1 }).ok, false);
  assert.equal(sl.propagationTrace(bad).ok, false);
  assert.equal(sl.shardingReport(bad).ok, false);
  assert.equal(sl.playground("", { pipeline: "nope" }).ok, false);
});

test("a field no request schema declares is an error naming the fields there are", () => {
  const text = fs.readFileSync(path.join(ROOT, "examples", "hello.mlir"), "utf8");
  const unknown = /options: unknown field 'pipelin'; the fields are .*pipeline/;
  assert.match(sl.playground(text, { pipelin: "basic" }).error, unknown);
  assert.match(sl.schedule(text, { pipelin: "basic" }).error, unknown);
  assert.match(sl.propagationTrace(text, { pipelin: "basic" }).error, unknown);
  assert.match(sl.opFactors(text, { line: 5, pipelin: "basic" }).error, unknown);
  assert.match(sl.valueLayout(text, { line: 5, pipelin: "basic" }).error, unknown);
  assert.match(sl.estimateGemm({ m: 8, k: 8, n: 8, dtpye: "f32" }).error, /unknown field 'dtpye'; the fields are .*dtype/);
  assert.match(sl.estimateCollective({ op: "all-reduce", bytes: 8, byte: 1 }).error, /unknown field 'byte'/);
  assert.match(sl.loadTable("{}", { formt: "auto" }).error, /unknown field 'formt'/);
});

test("core/src/api/request_fields.h is what scripts/gen-api-types.mjs --cpp generates", async () => {
  const { requestFieldsHeader } = await import(path.join(ROOT, "scripts", "gen-api-types.mjs"));
  const committed = fs.readFileSync(path.join(ROOT, "core", "src", "api", "request_fields.h"), "utf8");
  assert.ok(
    committed === requestFieldsHeader(),
    "core/src/api/request_fields.h is stale: run node scripts/gen-api-types.mjs --cpp > core/src/api/request_fields.h",
  );
});
