// The package as users get it: `npm pack`, install the tarball into an empty
// project, import it from ESM and from CommonJS (dynamic import), and type-
// check a TypeScript file against its .d.ts with tsc --noEmit.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { ROOT } from "./helpers.mjs";

const WASM = path.join(ROOT, "wasm");
const TSC = path.join(WASM, "node_modules", "typescript", "bin", "tsc");

const USE_TYPES = `import { load, type Diagnostic, type RunResult } from "shardlab";
const sl = await load();
const r: RunResult = sl.run("", ["-sdy-basic-propagate"]);
const d: Diagnostic[] = r.diagnostics;
const e = sl.estimateCollective({ op: "all-reduce", bytes: 1024 });
const t: number = e.ok ? e.time_us : d.length;
// @ts-expect-error flags are strings
sl.run("", [1]);
export { t };
`;

function sh(cmd, args, cwd) {
  return execFileSync(cmd, args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
}

test("npm pack installs into an empty project and imports from ESM, CJS and TS", () => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "shardlab-pack-"));
  try {
    const packed = JSON.parse(sh("npm", ["pack", "--json", "--pack-destination", tmp], WASM));
    const files = packed[0].files.map((f) => f.path).sort();
    assert.deepEqual(files, ["README.md", "dist/LICENSE-xla-perf-tables",
      "dist/PROVENANCE-xla-perf-tables.md", "dist/api-types.d.ts", "dist/boundary.d.ts",
      "dist/boundary.js", "dist/compare-phases.d.ts", "dist/compare-phases.js", "dist/index.d.ts", "dist/index.js",
      "dist/shardlab.d.mts", "dist/shardlab.mjs", "package.json"]);
    const tarball = path.join(tmp, packed[0].filename);
    const app = path.join(tmp, "app");
    fs.mkdirSync(app);
    fs.writeFileSync(path.join(app, "package.json"), '{"name":"app","private":true}');
    sh("npm", ["install", "--no-audit", "--no-fund", "--offline", tarball], app);

    fs.writeFileSync(path.join(app, "esm.mjs"),
      'import { load } from "shardlab";\nconst sl = await load();\n' +
      'console.log(JSON.stringify(sl.check("sdy.mesh @m = <[\\"x\\"=2]>")));\n');
    const esm = JSON.parse(sh("node", ["esm.mjs"], app));
    assert.equal(esm.ok, true);
    assert.match(esm.output, /sdy\.mesh @m/);
    // The comparison's phases alone, without the loader (a page's main
    // thread imports them; its workers load the core).
    fs.writeFileSync(path.join(app, "phases.mjs"),
      'import { comparePhased } from "shardlab/compare-phases";\n' +
      'const c = await comparePhased([() => ({ ok: false, error: "one" })], "", {});\n' +
      'console.log(JSON.stringify(c));\n');
    assert.equal(JSON.parse(sh("node", ["phases.mjs"], app)).error, "one");

    fs.writeFileSync(path.join(app, "cjs.cjs"),
      'import("shardlab").then(async (m) => {\n  const sl = await m.load();\n' +
      '  console.log(JSON.stringify(sl.version()));\n});\n');
    assert.equal(JSON.parse(sh("node", ["cjs.cjs"], app)).name, "shardlab");

    fs.writeFileSync(path.join(app, "use.ts"), USE_TYPES);
    fs.writeFileSync(path.join(app, "tsconfig.json"), JSON.stringify({
      compilerOptions: { strict: true, noEmit: true, module: "es2022", target: "es2022",
        moduleResolution: "bundler", types: [] },
      files: ["use.ts"],
    }));
    sh("node", [TSC, "-p", "."], app);
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
});
