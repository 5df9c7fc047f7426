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

test("compareStrategies: loops extrapolated by default, unrolled on request; why the fastest wins", () => {
  // The scanned layers loop 8 times: extrapolated, each row's program holds
  // 5 iterations, and the rows are the unrolled ones.
  const text = readExample("schedule/scanned_layers.mlir");
  const quick = sl.compareStrategies(text, { devices: 8 });
  const slow = sl.compareStrategies(text, { devices: 8, extrapolate_loops: false });
  assert.equal(quick.ok, true, quick.error);
  assert.equal(slow.ok, true, slow.error);
  const unrolled = new Map(slow.rows.filter((r) => r.ok).map((r) => [r.name, r.step_time_us]));
  let compared = 0;
  for (const row of quick.rows.filter((r) => r.ok && unrolled.has(r.name))) {
    assert.ok(Math.abs(row.step_time_us - unrolled.get(row.name)) <= 1e-9 * row.step_time_us, row.name);
    assert.ok(row.assumptions.some((a) => /iterations extrapolated from 5/.test(a)), row.name);
    assert.equal(row.uncosted_collectives, 0, row.name);
    compared++;
  }
  assert.ok(compared >= 8, `${compared} rows compared`);
  for (const row of slow.rows.filter((r) => r.ok))
    assert.ok(!row.assumptions.some((a) => /extrapolated/.test(a)), row.name);
  // The module as written is not the fastest: the reply says why.
  const user = quick.rows.find((r) => r.is_user);
  assert.ok(user.ok && !quick.rows[0].is_user);
  assert.ok(quick.why_fastest.some((w) => /^exposed communication: /.test(w)), quick.why_fastest.join("; "));
  assert.equal(typeof quick.pruned_by_bound, "number");
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
