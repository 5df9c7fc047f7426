// The 70B Llama training step that issue 45's measures name (80 layers,
// hidden 8,192, 64 heads of which 8 key/value, FFN 28,672, vocabulary
// 32,000, 4,096 tokens a sequence, selective recomputation, attention as a
// sharding rule), written by gen_training_step.py as one batch of
// `microBatch` sequences or, with `gradAccum`, a loop over that many
// micro-batches. One definition for the benchmark and the browser tests.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const HERE = path.dirname(fileURLToPath(import.meta.url));

/** The step's text. */
export function llama70bStep({ microBatch, gradAccum = 0 }) {
  const file = path.join(os.tmpdir(), `shardlab-70b-${process.pid}-${microBatch}x${gradAccum}.mlir`);
  const accumulate = gradAccum ? ["--grad-accum", String(gradAccum)] : [];
  execFileSync("python3", [path.join(HERE, "gen_training_step.py"), "--arch", "llama",
    "--layers", "80", "--hidden", "8192", "--heads", "64", "--kv-heads", "8", "--ffn", "28672",
    "--vocab", "32000", "--seq", "4096", "--micro-batch", String(microBatch), ...accumulate,
    "--recompute", "selective", "--attention", "rule", "-o", file], { stdio: "ignore" });
  try {
    return fs.readFileSync(file, "utf8");
  } finally {
    fs.rmSync(file, { force: true });
  }
}
