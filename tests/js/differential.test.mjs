// The WASM build against the native shardlab-opt: for every conformance file
// with a passing case, the first RUN line's flags give byte-identical stdout,
// stderr and success in both. A missing native binary or Shardy suite fails
// the test, unless a person allowed missing data (then it is reported as
// skipped: NOT RUN).
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { sl, ROOT, SHARED, missingDataAllowed } from "./helpers.mjs";

const OPT = process.env.SHARDLAB_OPT ?? path.join(ROOT, "build", "shardlab-opt");
const SUITE = process.env.SHARDLAB_SUITE ?? path.join(SHARED, "conformance", "shardy");
const PASSING = path.join(ROOT, "tests", "conformance", "passing_cases.txt");

/** Splits a shell word list (quotes, no expansion). */
function shellWords(text) {
  const words = [];
  let word = null;
  let quote = "";
  for (const c of text) {
    if (quote) {
      if (c === quote) quote = "";
      else word += c;
    } else if (c === "'" || c === '"') {
      quote = c;
      word ??= "";
    } else if (/\s/.test(c)) {
      if (word !== null) words.push(word);
      word = null;
    } else {
      word = (word ?? "") + c;
    }
  }
  if (word !== null) words.push(word);
  return words;
}

/** The sdy_opt arguments of a file's first RUN line, %s replaced. */
function runArgs(file) {
  const text = fs.readFileSync(file, "utf8");
  const line = text.split("\n").find((l) => /\/\/\s*RUN:.*sdy_opt/.test(l));
  if (!line) return null;
  const command = line.replace(/.*sdy_opt/, "").split("|")[0].replace("2>&1", "");
  return shellWords(command).map((w) => (w === "%s" ? file : w));
}

function passingFiles() {
  const names = fs.readFileSync(PASSING, "utf8").split("\n").filter(Boolean);
  return [...new Set(names.map((n) => n.split("#")[0]))];
}

const missing = [OPT, SUITE].filter((p) => !fs.existsSync(p));
const skip = missing.length && missingDataAllowed() ? `NOT RUN: missing ${missing.join(", ")}` : false;

test("WASM output equals native shardlab-opt on the conformance files", { skip }, (t) => {
    assert.deepEqual(missing, [], `missing: ${missing.join(", ")} (build with bash scripts/build.sh; ` +
      "the suite is ../shared/conformance/shardy or $SHARDLAB_SHARED/conformance/shardy)");
    const files = passingFiles();
    let compared = 0;
    const mismatches = [];
    for (const name of files) {
      const file = path.join(SUITE, name);
      const args = fs.existsSync(file) ? runArgs(file) : null;
      if (!args) continue;
      const native = spawnSync(OPT, args, { encoding: "utf8", maxBuffer: 1 << 28 });
      const wasm = sl.run(fs.readFileSync(file, "utf8"), args);
      compared++;
      if (native.stdout !== wasm.output) mismatches.push(`${name}: stdout differs`);
      else if (native.stderr !== wasm.stderr) mismatches.push(`${name}: stderr differs`);
      else if ((native.status === 0) !== wasm.ok) mismatches.push(`${name}: exit status differs`);
    }
    assert.ok(compared > 0, "no conformance file compared");
    t.diagnostic(`${compared} conformance files compared`);
    assert.deepEqual(mismatches, [], `${mismatches.length} of ${compared} files differ`);
  });
