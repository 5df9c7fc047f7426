// The package in a bundler, as a user's app gets it: `npm pack`, install the
// tarball into an empty project (offline: the package has no dependencies),
// `vite build` an entry that imports "shardlab" and calls load() + run()
// with the default configuration (only the es2022 target, for top-level
// await), then run the bundle: in Node (importing the built chunk) and as a
// page in Debian's headless Chromium (driven by web/'s playwright-core).
// Vite is the wasm/ package's dev dependency.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";
import { ROOT, MODULE } from "./helpers.mjs";

const WASM = path.join(ROOT, "wasm");
const VITE = path.join(WASM, "node_modules", "vite", "dist", "node", "index.js");
const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

// The app: propagate the shared test module and publish the reply, on the
// page (document title, #out) and on globalThis (for the Node run).
// Both halves must run: a missing Vite, Chromium or playwright-core fails the
// test (scripts/test.sh installs them before the first test runs).
const MAIN = `import { load } from "shardlab";
const text = ${JSON.stringify(MODULE)};
const sl = await load();
const r = sl.run(text, ["-sdy-propagation-pipeline"]);
const result = { ok: r.ok, output: r.output, version: sl.version().name };
globalThis.__shardlabResult = result;
if (typeof document !== "undefined") {
  document.getElementById("out").textContent = JSON.stringify(result);
  document.title = r.ok ? "ok" : "failed";
}
`;
const INDEX = `<!doctype html>
<html><head><meta charset="utf-8"><link rel="icon" href="data:,"><title>loading</title></head>
<body><pre id="out"></pre><script type="module" src="./main.js"></script></body></html>
`;

function sh(cmd, args, cwd) {
  return execFileSync(cmd, args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
}

function checkResult(result) {
  assert.equal(result.ok, true);
  assert.equal(result.version, "shardlab");
  // Propagation reached the add's result (it printed a sharding on it).
  assert.match(result.output, /stablehlo\.add %arg0, %arg0 \{sdy\.sharding = #sdy\.sharding_per_value<\[<@mesh, \[\{"x"\}, \{\}\]>\]>\}/);
}

/** playwright-core from web/ (the playground's tests), when installed. */
function playwright() {
  try {
    return createRequire(path.join(ROOT, "web", "package.json"))("playwright-core");
  } catch {
    return null;
  }
}

test("vite build of an app importing the packed package runs in Node and Chromium", async () => {
  assert.ok(fs.existsSync(VITE), "wasm/node_modules/vite missing: run bash scripts/build-wasm.sh (npm ci in wasm/)");
  const pw = playwright();
  assert.ok(pw, "web/node_modules/playwright-core missing: run bash scripts/build-web.sh (npm ci in web/)");
  assert.ok(fs.existsSync(CHROMIUM), `${CHROMIUM} missing: run bash scripts/install-deps.sh --browser`);
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "shardlab-vite-"));
  try {
    const packed = JSON.parse(sh("npm", ["pack", "--json", "--pack-destination", tmp], WASM));
    const app = path.join(tmp, "app");
    fs.mkdirSync(app);
    fs.writeFileSync(path.join(app, "package.json"), '{"name":"app","private":true,"type":"module"}');
    sh("npm", ["install", "--no-audit", "--no-fund", "--offline", path.join(tmp, packed[0].filename)], app);
    fs.writeFileSync(path.join(app, "main.js"), MAIN);
    fs.writeFileSync(path.join(app, "index.html"), INDEX);

    const { build } = await import(pathToFileURL(VITE).href);
    await build({
      root: app,
      configFile: false,
      logLevel: "error",
      base: "./",
      // es2022 for the top-level await; no module-preload polyfill so the
      // entry chunk also runs outside a document (Node).
      build: { target: "es2022", outDir: "dist", modulePreload: { polyfill: false } },
    });
    const assets = path.join(app, "dist", "assets");
    const chunks = fs.readdirSync(assets).filter((f) => f.endsWith(".js"));
    assert.equal(chunks.length, 1, `one chunk expected, got ${chunks}`);
    const chunk = path.join(assets, chunks[0]);
    // The .wasm is inlined: the bundle is the chunk (and the page) only.
    assert.ok(fs.statSync(chunk).size > 1e6, "the chunk holds the inlined wasm");
    assert.deepEqual(fs.readdirSync(assets).filter((f) => f.endsWith(".wasm")), []);

    delete globalThis.__shardlabResult;
    await import(pathToFileURL(chunk).href);
    checkResult(globalThis.__shardlabResult);

    const { startServer } = await import(pathToFileURL(path.join(ROOT, "scripts", "serve-web.mjs")).href);
    const server = await startServer(path.join(app, "dist"));
    const browser = await pw.chromium.launch({
      executablePath: CHROMIUM,
      args: ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--disable-quic"],
    });
    try {
      const page = await browser.newPage();
      const errors = [];
      page.on("pageerror", (e) => errors.push(e.message));
      page.on("console", (m) => { if (m.type() === "error") errors.push(m.text()); });
      await page.goto(`http://127.0.0.1:${server.address().port}/index.html`);
      await page.waitForFunction(() => document.title !== "loading", null, { timeout: 30000 });
      checkResult(JSON.parse(await page.locator("#out").textContent()));
      assert.deepEqual(errors, []);
    } finally {
      await browser.close();
      server.close();
    }
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
});
