// Shared by the JS tests: paths and one loaded instance of the package.
import { fileURLToPath } from "node:url";
import path from "node:path";
import fs from "node:fs";
import { validating } from "./schemas.mjs";

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
export const DIST = path.join(ROOT, "wasm", "dist");

if (!fs.existsSync(path.join(DIST, "index.js")))
  throw new Error("wasm/dist/index.js missing: run bash scripts/build-wasm.sh first");

const { load: loadRaw } = await import(path.join(DIST, "index.js"));

/** A new instance whose replies are all checked against schemas/api. */
export async function load() {
  return validating(await loadRaw());
}

/** One instance shared by a test file (instantiation decodes ~1 MB). */
export const sl = await load();

export const MODULE = `sdy.mesh @mesh = <["x"=2, "y"=2]>

func.func @main(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> tensor<8x16xf32> {
  %0 = stablehlo.add %arg0, %arg0 : tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}
`;

/**
 * The shared data folder (conformance suites, corpus, XLA tables): what
 * tests/shared_data.py finds (scripts/test.sh exports it as SHARDLAB_SHARED),
 * else ../shared beside the checkout.
 */
export const SHARED = process.env.SHARDLAB_SHARED ?? path.join(ROOT, "..", "shared");

/** Missing shared data fails a test unless a person allowed it (never under CI). */
export function missingDataAllowed() {
  const ci = ["true", "1", "yes"].includes((process.env.CI ?? "").toLowerCase());
  return !ci && process.env.SHARDLAB_ALLOW_MISSING_DATA === "1";
}

export function readExample(name) {
  return fs.readFileSync(path.join(ROOT, "examples", name), "utf8");
}
