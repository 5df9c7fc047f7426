// compareStrategies / suggestShardings through the package (replies checked
// against schemas/api/strategies.schema.json by the validating instance).
import { test } from "node:test";
import assert from "node:assert/strict";
import { sl, readExample } from "./helpers.mjs";

test("compareStrategies: >= 8 candidates beside the module as written, fastest first", () => {
  const text = readExample("schedule/megatron_block.mlir");
  const c = sl.compareStrategies(text, { devices: 8 });
  assert.equal(c.ok, true, c.error);
  assert.equal(c.devices, 8);
  assert.ok(c.rows.length >= 9, `${c.rows.length} rows`);
  assert.equal(c.rows.filter((r) => r.is_user).length, 1);
  const ran = c.rows.filter((r) => r.ok);
  assert.deepEqual(ran.map((r) => r.step_time_us), [...ran.map((r) => r.step_time_us)].sort((a, b) => a - b));
  // The batch of 2 does not split 8 ways: DP is a row with that reason.
  const dp = c.rows.find((r) => r.name === "DP");
  assert.equal(dp.ok, false);
  assert.match(dp.error, /dimension 0 of %x \(size 2\) does not divide by 8/);
  // TP is Megatron's layout: the same program as the module as written.
  const tp = c.rows.find((r) => r.name === "TP");
  const user = c.rows.find((r) => r.is_user);
  assert.equal(tp.step_time_us, user.step_time_us);
  assert.deepEqual(tp.shardings.find((s) => s.name === "%wq").sharding, '[{}, {"model"}p1, {}]');
  assert.equal(c.args.find((a) => a.name === "%x").role, "data");
});

test("compareStrategies: bad options and bad modules are error values", () => {
  assert.match(sl.compareStrategies("func.func @main(", {}).error, /does not parse/);
  assert.match(sl.compareStrategies(readExample("hello.mlir"), { devices: 0 }).error, /devices/);
  assert.match(sl.compareStrategies(readExample("hello.mlir"), { bogus: 1 }).error, /bogus/);
});

test("suggestShardings: faster than the user's, with the changes and why", () => {
  const text = readExample("schedule/dp_mlp.mlir");
  const s = sl.suggestShardings(text, { budget_ms: 3000, keep: 2 });
  assert.equal(s.ok, true, s.error);
  assert.ok(s.user.ok);
  assert.ok(s.suggestions.length >= 1 && s.suggestions.length <= 2);
  const best = s.suggestions[0];
  assert.ok(best.candidate.step_time_us < s.user.step_time_us);
  assert.ok(best.speedup > 1);
  assert.ok(best.changes.some((c) => c.startsWith("mesh:") || c.startsWith("%")));
  assert.ok(best.reasons.some((r) => /all-reduce/.test(r)), best.reasons.join("; "));
});
