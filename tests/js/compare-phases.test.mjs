// compareStrategies in phases, spread over several instances
// (comparePhased, as the playground's pool of workers runs it): the merged
// rows are the one-instance comparison's, and rows that are not this
// module's phases' are error values.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { sl, load, ROOT, DIST } from "./helpers.mjs";

const { comparePhased } = await import(path.join(DIST, "index.js"));

// A 4-layer Llama step of 4 micro-batches on 8 devices with 1 GB each: some
// layouts fit, the fastest is recomputed (a recompute row), and layouts that
// do not fit are recomputed in full and split (rows of all three phases).
function smallLlama() {
  const file = path.join(os.tmpdir(), `shardlab-phases-${process.pid}.mlir`);
  execFileSync("python3", [path.join(ROOT, "bench/models/gen_training_step.py"), "--arch", "llama",
    "--layers", "4", "--hidden", "1024", "--heads", "8", "--vocab", "8000", "--seq", "1024",
    "--micro-batch", "16", "--grad-accum", "4", "--recompute", "selective", "--attention", "rule",
    "-o", file], { stdio: "ignore" });
  const text = fs.readFileSync(file, "utf8");
  fs.rmSync(file);
  return text;
}

/** A comparison without the times it took to make. */
function timeless(c) {
  const { elapsed_ms: _e, svg: _s, ...rest } = c;
  return { ...rest, rows: c.rows.map(({ elapsed_ms: _r, ...row }) => row) };
}

const OPTIONS = { devices: 8, device_memory: 1e9 };

test("comparePhased: 2 and 3 instances give the one-instance rows, every phase contributing", async () => {
  const text = smallLlama();
  const whole = sl.compareStrategies(text, OPTIONS);
  assert.equal(whole.ok, true, whole.error);
  const names = whole.rows.map((r) => r.name);
  assert.ok(names.some((n) => / recompute (none|selective)$/.test(n)), names.join(", "));
  assert.ok(names.some((n) => / recompute full$/.test(n)), names.join(", "));
  assert.ok(names.some((n) => / mb÷\d+$/.test(n)), names.join(", "));
  const other = await load();
  for (const instances of [[sl, other], [sl, other, sl]]) {
    const phases = [];
    const calls = instances.map((i) => (t, o) => {
      phases.push(o.phase?.name);
      return i.compareStrategies(t, o);
    });
    const shared = await comparePhased(calls, text, OPTIONS);
    assert.equal(shared.ok, true, shared.error);
    assert.deepEqual(timeless(shared), timeless(whole), `${instances.length} instances`);
    // Every phase the core has, each on every instance, then finish on one.
    const n = instances.length;
    assert.deepEqual(phases, ["base", "recompute", "split", "interleave"].flatMap((p) => Array(n).fill(p)).concat("finish"));
  }
  // A share evaluates only its plans: the base phase's rows of 2 shares
  // are disjoint and together every base row.
  const halves = [0, 1].map((share) => sl.compareStrategies(text, { ...OPTIONS, phase: { name: "base", share, shares: 2 } }));
  assert.ok(halves[0].plan_indices.every((i) => i % 2 === 0));
  assert.ok(halves[1].plan_indices.every((i) => i % 2 === 1));
  const base = whole.rows.filter((r) => !/ recompute | mb÷|recompute (none|selective|full)$/.test(r.name)).length;
  assert.equal(halves[0].rows.length + halves[1].rows.length, base);
});

test("compareStrategies phases: bad phases and rows of another module are error values", () => {
  const text = smallLlama();
  const phase = (p) => sl.compareStrategies(text, { ...OPTIONS, phase: p });
  assert.match(phase({ name: "middle" }).error, /options\.phase\.name: expected "base", "recompute", "split", "interleave" or "finish", got "middle"/);
  assert.match(phase({ name: "base", share: 2, shares: 2 }).error, /0 <= share < shares/);
  assert.match(phase({ name: "base", spare: 1 }).error, /options\.phase: unknown field 'spare'/);
  assert.match(phase({ name: "recompute" }).error, /expected the \d+ rows of the base phase, got 0/);
  const base = phase({ name: "base" });
  assert.equal(base.ok, true, base.error);
  const { step_time_us: _t, ...broken } = base.rows[3];
  assert.match(phase({ name: "recompute", rows: [...base.rows.slice(0, 3), broken, ...base.rows.slice(4)] }).error,
    /options\.phase\.rows\[3\]\.step_time_us: expected a number/);
  const renamed = base.rows.map((r, i) => (i === 5 ? { ...r, name: "FSDP×TP 99×99" } : r));
  assert.match(phase({ name: "split", rows: renamed }).error,
    /row 5 is "FSDP×TP 99×99", expected "[^"]+" \(rows of another module or other options\?\)/);
});
