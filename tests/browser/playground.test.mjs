// The playground in real headless Chromium (Debian's /usr/bin/chromium
// driven by playwright-core), doing what a person does: pick each example,
// break and fix a sharding, use the structured editor, read the factor
// table, step through the trace, open the device grid, load performance
// tables, export the trace, reload from a share link. Saves a screenshot of
// each view to out/browser/ and measures edit-to-update latency and the
// built page's gzip weight (out/browser/results.json).
//
// Needs web/dist (cd web && npm run build) and web/node_modules.
import test from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import zlib from "node:zlib";
import { createRequire } from "node:module";
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { startServer } from "../../scripts/serve-web.mjs";
import { llama70bStep } from "../../bench/models/llama70b.mjs";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const DIST = path.join(ROOT, "web", "dist");
const OUT = path.join(ROOT, "out", "browser");
const requireWeb = createRequire(path.join(ROOT, "web", "package.json"));
const { chromium } = requireWeb("playwright-core");
const LZ = requireWeb("lz-string");
const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

assert.ok(fs.existsSync(path.join(DIST, "index.html")), "web/dist missing: cd web && npm run build");

// The npm package's own reply for the text and settings the page shows: the
// numbers on screen must be those numbers, not only numbers that change.
const { load: loadApi } = await import(path.join(ROOT, "wasm", "dist", "index.js"));
const api = await loadApi();
fs.mkdirSync(OUT, { recursive: true });

const results = { latency_ms: {}, core_ms: {}, reply_ms: {}, core_stages_ms: {}, weight: {}, compare_ms: {} };
const consoleErrors = [];
const foreignRequests = [];
let server, context, page, origin, userDataDir;

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

async function updates() {
  return page.evaluate(() => window.__shardlab?.updates ?? 0);
}

/** Runs `action` and waits until the page has applied one more update. */
async function afterUpdate(action, p = page) {
  const before = await p.evaluate(() => window.__shardlab?.updates ?? 0);
  await action();
  await p.waitForFunction((n) => (window.__shardlab?.updates ?? 0) > n, before, { timeout: 20000 });
}

/** Navigates `p` to `url` and waits for the new page's first update. */
async function gotoAndWait(url, p = page) {
  await p.goto(url);
  await p.waitForFunction(() => (window.__shardlab?.updates ?? 0) >= 1, null, { timeout: 30000 });
}

async function editorText(p = page) {
  return p.evaluate(() => {
    const lines = [...document.querySelectorAll("#editor .cm-line")].map((l) => l.textContent);
    return lines.join("\n");
  });
}

/** Puts the cursor at 1-based line/column with the keyboard. */
async function cursorTo(line, column) {
  // Lines wrap, so click the start of the line rather than count ArrowDowns.
  await page.locator("#editor .cm-line").nth(line - 1).click({ position: { x: 1, y: 4 } });
  for (let i = 1; i < column; i++) await page.keyboard.press("ArrowRight");
  await page.waitForTimeout(150);
}

/** Replaces the whole module by typing-free select-all + insert (as a paste). */
async function replaceText(text) {
  await page.locator("#editor .cm-content").click();
  await page.keyboard.press("Control+a");
  await page.keyboard.insertText(text);
}

async function openTab(name) {
  await page.getByTestId(`tab-${name}`).click();
  await page.getByTestId(`view-${name}`).waitFor({ state: "visible" });
}

async function shot(name) {
  await page.screenshot({ path: path.join(OUT, `${name}.png`) });
}

/**
 * A Chrome performance trace (DevTools protocol) of `action`: saved to
 * out/browser/`name`.json for the Performance panel, summarized as busy time
 * per thread and time per event kind (milliseconds, events nest).
 */
async function traceOf(name, action) {
  const cdp = await context.newCDPSession(page);
  const complete = new Promise((resolve) => cdp.once("Tracing.tracingComplete", resolve));
  await cdp.send("Tracing.start", {
    transferMode: "ReturnAsStream",
    traceConfig: { includedCategories: ["devtools.timeline", "disabled-by-default-devtools.timeline", "v8.execute", "v8"] },
  });
  await action();
  await cdp.send("Tracing.end");
  const { stream } = await complete;
  const chunks = [];
  for (;;) {
    const chunk = await cdp.send("IO.read", { handle: stream });
    chunks.push(chunk.base64Encoded ? Buffer.from(chunk.data, "base64").toString() : chunk.data);
    if (chunk.eof) break;
  }
  await cdp.send("IO.close", { handle: stream });
  await cdp.detach();
  const text = chunks.join("");
  fs.writeFileSync(path.join(OUT, `${name}.json`), text);
  const parsed = JSON.parse(text);
  const events = Array.isArray(parsed) ? parsed : parsed.traceEvents;
  const threads = new Map();
  for (const e of events)
    if (e.ph === "M" && e.name === "thread_name") threads.set(`${e.pid}:${e.tid}`, e.args.name);
  const kinds = ["RunTask", "FunctionCall", "v8.run", "v8.compile", "V8.GCScavenger", "MajorGC", "MinorGC",
    "EventDispatch", "TimerFire", "Layout", "UpdateLayoutTree", "Paint", "HandlePostMessage"];
  const summary = {};
  for (const e of events) {
    if (e.ph !== "X" || !kinds.includes(e.name)) continue;
    const thread = threads.get(`${e.pid}:${e.tid}`) ?? `${e.tid}`;
    if (!/CrRendererMain|DedicatedWorker/.test(thread)) continue;
    const key = `${thread.replace(/ thread$/, "")} ${e.name}`;
    summary[key] = Math.round(((summary[key] ?? 0) + e.dur / 1000) * 10) / 10;
  }
  return summary;
}

/** Edit-to-update latency: type at the end of the document `n` times. */
async function measureLatency(n = 5) {
  const samples = [], core = [], reply = [];
  let stages = {};
  await page.locator("#editor .cm-content").click();
  await page.keyboard.press("Control+End");
  for (let i = 0; i < n; i++) {
    await afterUpdate(() => page.keyboard.type(i % 2 ? "\n" : " "));
    const probe = await page.evaluate(() => window.__shardlab);
    samples.push(probe.lastLatencyMs);
    core.push(probe.lastCoreMs);
    reply.push(probe.lastReplyMs);
    stages = probe.lastTimings;
  }
  return { latency: median(samples), core: median(core), reply: median(reply), stages };
}

test.before(async () => {
  server = await startServer(DIST);
  origin = `http://127.0.0.1:${server.address().port}`;
  userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), "shardlab-chromium-"));
  // A fresh profile (--user-data-dir) each run, passed the way playwright wants it.
  context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM,
    headless: true,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
      "--disable-component-update", "--disable-sync", "--disable-quic"],
    viewport: { width: 1400, height: 900 },
    acceptDownloads: true,
  });
  page = context.pages()[0] ?? await context.newPage();
  page.on("console", (msg) => { if (msg.type() === "error") consoleErrors.push(msg.text()); });
  page.on("pageerror", (err) => consoleErrors.push(String(err)));
  context.on("request", (req) => { if (!req.url().startsWith(origin) && !/^(data|blob):/.test(req.url())) foreignRequests.push(req.url()); });
  await gotoAndWait(`${origin}/?example=hello`);
});

test.after(async () => {
  fs.writeFileSync(path.join(OUT, "results.json"), JSON.stringify(results, null, 2) + "\n");
  await context?.close();
  server?.close();
  if (userDataDir) fs.rmSync(userDataDir, { recursive: true, force: true });
});

test("the page loads, propagates the example and highlights changed shardings", async () => {
  await page.locator("#output .cm-content").waitFor();
  assert.match(await page.getByTestId("status").textContent(), /propagated/);
  assert.ok(await page.locator("#output .cm-changed").count() > 0, "changed shardings highlighted");
  assert.match(await page.locator("#output .cm-content").textContent(), /sdy\.sharding_per_value/);
  await shot("01-load-output");
});

test("every example propagates; edit-to-update latency per example", async () => {
  const names = await page.$$eval("[data-testid=examples] option", (os) => os.map((o) => o.value).filter(Boolean));
  assert.ok(names.length >= 5, `examples: ${names}`);
  for (const name of names) {
    await afterUpdate(() => page.getByTestId("examples").selectOption(name));
    const status = await page.getByTestId("status").textContent();
    assert.match(status, /propagated/, `${name}: ${status}`);
    // A module in GSPMD form says that its strings were imported.
    if (name.includes("gspmd")) {
      assert.match(status, /^from GSPMD: propagated/, status);
      await shot("16-gspmd-example");
    }
    const m = await measureLatency();
    results.latency_ms[name] = Math.round(m.latency * 10) / 10;
    results.core_ms[name] = Math.round(m.core * 10) / 10;
    results.reply_ms[name] = Math.round(m.reply * 10) / 10;
  }
  // A trace of an edit in the slowest example, for where its time goes.
  const slowest = names.reduce((a, b) => (results.latency_ms[b] > results.latency_ms[a] ? b : a));
  await afterUpdate(() => page.getByTestId("examples").selectOption(slowest));
  await page.locator("#editor .cm-content").click();
  await page.keyboard.press("Control+End");
  results.trace_slowest_example = { name: slowest, ms: await traceOf("trace-slowest-example", () => afterUpdate(() => page.keyboard.type(" "))) };
  assert.ok(Object.keys(results.trace_slowest_example.ms).length > 0, "the trace has the page's tasks");
  await afterUpdate(() => page.getByTestId("examples").selectOption("hello"));
});

test("a broken sharding shows a diagnostic; fixing it updates propagation", async () => {
  const text = await editorText();
  await afterUpdate(() => replaceText(text.replace('[{"x"}, {}]', '[{"z"}, {}]')));
  await page.locator("#editor .cm-lintRange-error").first().waitFor();
  const problems = await page.getByTestId("problems").textContent();
  assert.match(problems, /error/);
  assert.match(problems, /"z"|z/);
  assert.match(await page.getByTestId("status").textContent(), /failed/);
  await shot("02-diagnostic");
  await afterUpdate(() => replaceText(text.replace('[{"x"}, {}]', '[{}, {"x"}]')));
  assert.equal(await page.locator("#editor .cm-lintRange-error").count(), 0);
  assert.match(await page.getByTestId("status").textContent(), /propagated/);
  // The lhs is now sharded on its contracting dim: the dot's result no longer gets "x" on dim 0.
  const out = await page.locator("#output .cm-content").textContent();
  assert.ok(!out.includes('[{"x", ?}, {"y", ?}]'), out);
  await afterUpdate(() => replaceText(text));
});

test("a func argument's sharding error points at that argument, not the func", async () => {
  const text = await editorText();
  // A signature over several lines: the verifier reports "arg 1 - ..." at
  // the func.func (as MLIR does); the diagnostic's range is %arg1 and its
  // related location the function, and the editor underlines the range.
  const broken = `sdy.mesh @mesh = <["x"=2, "y"=2]>

func.func @main(
    %arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>},
    %arg1: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"q"}, {}]>})
    -> (tensor<8x16xf32>, tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"w"}]>}) {
  return %arg0, %arg1 : tensor<8x16xf32>, tensor<8x16xf32>
}
`;
  await afterUpdate(() => replaceText(broken));
  await page.locator("#editor .cm-lintRange-error").first().waitFor();
  const problems = await page.getByTestId("problems").textContent();
  assert.match(problems, /5:5 error: 'func\.func' op arg 1 - unknown axis name: "q" \(in function @main at 3:1\)/);
  assert.equal(
    await page.locator("#editor .cm-lintRange-error").first().textContent(),
    '%arg1: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"q"}, {}]>}',
  );
  await shot("02b-func-arg-diagnostic");
  // A bad result sharding points at that result's type.
  await afterUpdate(() => replaceText(broken.replace('{"q"}', '{"y"}')));
  assert.match(await page.getByTestId("problems").textContent(), /6:27 error: 'func\.func' op result 1 - unknown axis name: "w"/);
  await afterUpdate(() => replaceText(text));
});

test("pipeline choice: explicit collectives", async () => {
  await afterUpdate(() => page.getByTestId("examples").selectOption("playground/tensor_parallel_mlp"));
  await afterUpdate(() => page.getByTestId("pipeline").selectOption("explicit"));
  assert.match(await page.locator("#output .cm-content").textContent(), /sdy\.all_reduce/);
  await shot("03-explicit-collectives");
  // The per-device program: local shapes and the StableHLO all-reduce the
  // schedule estimates.
  await afterUpdate(() => page.getByTestId("pipeline").selectOption("partition"));
  const local = await page.locator("#output .cm-content").textContent();
  assert.match(local, /"stablehlo\.all_reduce"/);
  assert.match(local, /replica_groups = dense<\[\[0, 1, 2, 3\], \[4, 5, 6, 7\]\]>/);
  assert.doesNotMatch(local, /sdy\.all_reduce/);
  await shot("03b-per-device-program");
  await afterUpdate(() => page.getByTestId("pipeline").selectOption("pipeline"));
  await afterUpdate(() => page.getByTestId("examples").selectOption("hello"));
});

test("the structured editor writes a dimension sharding into the text", async () => {
  const text = await editorText();
  const line = text.split("\n").findIndex((l) => l.includes("%arg2: tensor")) + 1;
  const column = text.split("\n")[line - 1].indexOf("%arg2") + 2;
  await cursorTo(line, column);
  await openTab("sharding");
  await page.getByText("%arg2").first().waitFor();
  const outBefore = await page.locator("#output .cm-content").textContent();
  // %arg2 had no sharding: "y" on its dim 0 conflicts with the batch's "x".
  await afterUpdate(() => page.getByTestId("add-axis-0").selectOption({ label: '"y"' }));
  await page.waitForFunction(() => document.querySelector("[data-testid=sharding-text]")?.textContent?.includes('{"y"}'));
  const after = await editorText();
  assert.match(after, /%arg2: tensor<8x32xf32> \{sdy\.sharding = #sdy\.sharding<@mesh, \[\{"y"\}, \{\}\]>\}/);
  await afterUpdate(() => page.getByTestId("open-1").check());
  assert.match(await editorText(), /%arg2: tensor<8x32xf32> \{sdy\.sharding = #sdy\.sharding<@mesh, \[\{"y"\}, \{\?\}\]>\}/);
  const outAfter = await page.locator("#output .cm-content").textContent();
  assert.notEqual(outAfter, outBefore);
  await shot("04-sharding-editor");

  // An op result without a sharding gets a #sdy.sharding_per_value attribute.
  const addLine = (await editorText()).split("\n").findIndex((l) => l.includes("stablehlo.add")) + 1;
  await cursorTo(addLine, 4);
  await page.getByText("(result)").waitFor();
  await afterUpdate(() => page.getByTestId("add-axis-0").selectOption({ label: '"x"' }));
  assert.match(await editorText(), /%1 = stablehlo\.add %0, %arg2 \{sdy\.sharding = #sdy\.sharding_per_value<\[<@mesh, \[\{"x"\}, \{\}\]>\]>\} : tensor<8x32xf32>/);
  assert.match(await page.getByTestId("status").textContent(), /propagated/);

  // Mesh axes: resizing "y" rewrites the sdy.mesh declaration.
  await afterUpdate(async () => {
    await page.getByTestId("mesh-size-y").fill("4");
    await page.getByTestId("mesh-size-y").press("Enter");
  });
  assert.match(await editorText(), /sdy\.mesh @mesh = <\["x"=2, "y"=4\]>/);
  assert.match(await page.getByTestId("status").textContent(), /propagated/);
  await afterUpdate(() => replaceText(text));
});

test("factor table of the dot before and after propagation", async () => {
  const text = await editorText();
  const line = text.split("\n").findIndex((l) => l.includes("stablehlo.dot_general")) + 1;
  await cursorTo(line, 5);
  await openTab("factors");
  await page.getByTestId("factors-after").waitFor();
  const after = await page.getByTestId("factors-after").textContent();
  assert.match(after, /result 0/);
  assert.match(after, /reduction/);
  assert.ok(await page.locator("[data-testid=factors-after] td.changed").count() > 0);
  await shot("05-factor-table");
});

test("trace step-through with the slider and buttons", async () => {
  await openTab("trace");
  await page.getByTestId("trace-slider").waitFor();
  const first = await page.getByTestId("trace-position").textContent();
  const steps = Number(first.split("/")[1]);
  assert.ok(steps >= 2, first);
  await page.getByTestId("trace-slider").focus();
  await page.keyboard.press("Home");
  assert.match(await page.getByTestId("trace-position").textContent(), /step 1 \//);
  const op1 = await page.getByTestId("trace-op").textContent();
  await page.getByTestId("trace-next").click();
  assert.match(await page.getByTestId("trace-position").textContent(), /step 2 \//);
  assert.notEqual(await page.getByTestId("trace-op").textContent(), op1);
  assert.ok(await page.locator("[data-testid=trace-decisions] tbody tr").count() > 0);
  await shot("06-trace");
});

test("device grid: shards and local shape of the selected value", async () => {
  const text = await editorText();
  const line = text.split("\n").findIndex((l) => l.includes("stablehlo.add")) + 1;
  await cursorTo(line, 5);
  await openTab("devices");
  await page.getByTestId("device-grid").waitFor();
  assert.equal(await page.getByTestId("device").count(), 4);
  assert.equal(await page.getByTestId("local-shape").textContent(), "[4,16]");
  await shot("07-devices");
});

test("device values: each device's values around each collective, checked against the global run", async () => {
  const kept = await editorText();
  // Row sums over "y": each device sums its half of the columns, and the
  // all-reduce over "y" gives both devices of a row block the whole sums.
  const text = `sdy.mesh @mesh = <["x"=2, "y"=2]>

func.func @main(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) -> tensor<8xf32> {
  %zero = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %sum = stablehlo.reduce(%arg0 init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<8x16xf32>, tensor<f32>) -> tensor<8xf32>
  return %sum : tensor<8xf32>
}
`;
  await afterUpdate(() => replaceText(text));
  await cursorTo(5, 4);
  await page.getByTestId("device-grid").waitFor();
  await page.getByTestId("values-run").click();
  await page.getByTestId("values-status").waitFor();
  const status = await page.getByTestId("values-status").textContent();
  assert.match(status, /^4 simulated devices: results match the global run/, status);
  // The same run through the package in Node: as many steps, same values.
  const r = api.execute(text, { shardings: "module", collectives: true, max_elements: 16, max_collectives: 32 });
  assert.equal(r.partition.status, "match");
  assert.deepEqual(r.collectives.map((c) => c.op), ["stablehlo.all_reduce"]);
  assert.equal(await page.getByTestId("values-step").count(), 1);
  // Opened: the cursor is on the reduce the all-reduce comes from.
  assert.equal(await page.locator("[data-testid=values-step][open]").count(), 1);
  assert.equal(await page.locator("[data-testid=values-step]").first().locator("[data-testid=values-device]").count(), 4);
  const first = r.collectives[0].devices[0].after[0].values[0];
  const cell = await page.locator("[data-testid=values-step]").first().locator("[data-testid=values-device] td").nth(2).textContent();
  assert.ok(cell.startsWith(`[${Number.isInteger(first) ? first : Number(first.toPrecision(4))}`), `${cell} vs ${first}`);
  // Devices 0 and 1 hold the same rows: their partial sums differ, their
  // results agree.
  const rows = page.locator("[data-testid=values-device]");
  const cells = async (i) => rows.nth(i).locator("td").allTextContents();
  const [d0, d1] = [await cells(0), await cells(1)];
  assert.notEqual(d0[1], d1[1]);
  assert.equal(d0[2], d1[2]);
  await shot("07b-device-values");
  await afterUpdate(() => replaceText(kept));
});

function scaledTable(factor) {
  const table = JSON.parse(fs.readFileSync(path.join(ROOT, "examples/tables/h100_analytical.shardlab.json"), "utf8"));
  for (const c of table.collectives) {
    c.time_us.median *= factor;
    c.throughput_bytes_per_s /= factor;
  }
  return table;
}

test("schedule: Gantt, settings, tables (valid and invalid), trace export", async () => {
  await afterUpdate(() => page.getByTestId("examples").selectOption("playground/tensor_parallel_mlp"));
  await openTab("schedule");
  await page.getByTestId("gantt").waitFor();
  assert.ok(await page.getByTestId("bar-collective").count() > 0);
  await page.getByTestId("bar-collective").first().hover();
  assert.match(await page.getByTestId("gantt-detail").textContent(), /all-reduce|all_reduce/);
  const before = await page.getByTestId("total-step").textContent();
  // Under the peak, what fills it: the largest temporaries by op, and on
  // hover all of them with the parameters.
  assert.match(await page.getByTestId("total-peak").textContent(), /^largest live: \S+ [\d.]+ [KMGT]?i?B/);
  assert.match(await page.getByTestId("total-peak").getAttribute("title"), /^at the peak, while stablehlo\.\S+ runs:\nparameters [\d.]+ [KMGT]?i?B\n/);
  await shot("08-schedule");

  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "shardlab-tables-"));
  const slow = path.join(dir, "slow_collectives.shardlab.json");
  fs.writeFileSync(slow, JSON.stringify(scaledTable(20)));
  await afterUpdate(() => page.getByTestId("table-file").setInputFiles(slow));
  await page.getByTestId("table-status").waitFor();
  assert.match(await page.getByTestId("table-status").textContent(), /collective/);
  const after = await page.getByTestId("total-step").textContent();
  assert.notEqual(after, before, "a slower collective table changes the step time");
  await shot("09-schedule-table");

  const bad = path.join(dir, "broken.shardlab.json");
  fs.writeFileSync(bad, JSON.stringify({ format: "shardlab-perf-table", version: 1, collectives: [{ op: "all-reduce" }] }));
  await page.getByTestId("table-file").setInputFiles(bad);
  await page.locator("[data-testid=table-status].error").waitFor();
  assert.match(await page.getByTestId("table-status").textContent(), /broken\.shardlab\.json: /);
  await shot("10-table-error");

  const [download] = await Promise.all([page.waitForEvent("download"), page.getByTestId("export-trace").click()]);
  const trace = JSON.parse(fs.readFileSync(await download.path(), "utf8"));
  assert.ok(Array.isArray(trace.traceEvents) && trace.traceEvents.length > 0);
  assert.ok(trace.traceEvents.some((e) => e.ph === "X"));
  fs.rmSync(dir, { recursive: true, force: true });

  await afterUpdate(() => page.getByTestId("set-preset").selectOption("a100"));
  assert.notEqual(await page.getByTestId("total-step").textContent(), after);
});

// XLA's text-proto tables (shaped like XLA's default tables; the numbers
// are made up so the estimate visibly changes).
const XLA_COLLECTIVES = `# proto-message: xla.DeviceHloInstructionProfiles
entries {
  key: "sm_90"
  value {
${[1024, 1048576].map((n, i) => `    entries {
      instruction {
        opcode: "all-reduce"
        shape { element_type: F32 dimensions: ${n} }
        iota_collective_device_list {
          num_replica_groups: 1 num_devices_per_group: 4 iota_reshape_dims: 4 iota_transpose_perm: 0
        }
        use_global_device_ids: true
      }
      network_throughput_bytes_per_sec: ${i ? 100000000 : 1000000}
    }`).join("\n")}
  }
}
`;
const XLA_GEMMS = `# proto-message: xla.GemmPerfTable
entries {
  key: "sm_90"
  value {
    entries { b: 1 m: 256 n: 256 k: 256 flops { key: "f32xf32->f32" value: 1000000000 } }
  }
}
`;

/** Drops a file on the table drop zone as a person dragging it there would. */
async function dropFile(name, content) {
  await page.getByTestId("table-drop").evaluate((zone, file) => {
    const data = new DataTransfer();
    data.items.add(new File([file.content], file.name, { type: "text/plain" }));
    for (const type of ["dragenter", "dragover", "drop"])
      zone.dispatchEvent(new DragEvent(type, { bubbles: true, cancelable: true, dataTransfer: data }));
  }, { name, content });
}

test("tables by drag-and-drop: XLA text-proto profiles and GEMM tables change the schedule; bad files are reported", async () => {
  await openTab("schedule");
  await afterUpdate(() => page.getByTestId("set-preset").selectOption("h100"));
  await page.getByTestId("gantt").waitFor();
  const before = await page.getByTestId("total-step").textContent();

  await afterUpdate(() => dropFile("collective_perf_table.txtpb", XLA_COLLECTIVES));
  assert.match(await page.getByTestId("table-status").textContent(),
    /collective_perf_table\.txtpb: xla-collective table, 2 collective and 0 GEMM entries/);
  const collectives = await page.getByTestId("total-step").textContent();
  assert.notEqual(collectives, before, "the XLA collective profile changes the step time");
  await shot("14-table-drop-xla-collectives");

  await afterUpdate(() => dropFile("gemm_perf_table.txtpb", XLA_GEMMS));
  assert.match(await page.getByTestId("table-status").textContent(),
    /gemm_perf_table\.txtpb: xla-gemm table, 0 collective and 1 GEMM entries/);
  assert.notEqual(await page.getByTestId("total-step").textContent(), collectives, "the GEMM table changes the step time");

  // Validation errors: a cut-off text proto (with its line:column) and an
  // unknown collective op; the last good table stays in use.
  await dropFile("cut.txtpb", XLA_COLLECTIVES.slice(0, 120));
  await page.locator("[data-testid=table-status].error").waitFor();
  assert.match(await page.getByTestId("table-status").textContent(), /cut\.txtpb: text proto \d+:\d+: /);
  await dropFile("bad_op.txtpb", XLA_COLLECTIVES.replaceAll("all-reduce", "all-explode"));
  await page.waitForFunction(() => document.querySelector("[data-testid=table-status]")?.textContent?.includes("bad_op.txtpb"));
  assert.match(await page.getByTestId("table-status").textContent(), /bad_op\.txtpb: entries\[0\]: unknown collective op 'all-explode'/);
  await shot("15-table-drop-error");
  await page.getByTestId("tab-output").click();
});

test("share link reload restores the module and settings", async () => {
  await afterUpdate(() => page.getByTestId("pipeline").selectOption("basic"));
  await page.getByTestId("share").click();
  const url = page.url();
  assert.match(url, /#code=/);
  const text = await editorText();
  // Local storage cleared: the link alone must restore the state.
  await page.evaluate(() => localStorage.clear());
  const other = await context.newPage();
  other.on("pageerror", (err) => consoleErrors.push(String(err)));
  await gotoAndWait(url, other);
  assert.equal(await editorText(other), text);
  assert.equal(await other.getByTestId("pipeline").inputValue(), "basic");
  await other.close();
  await afterUpdate(() => page.getByTestId("pipeline").selectOption("pipeline"));
});

test("keyboard: tabs switch with arrow keys; dark theme renders", async () => {
  await page.getByTestId("tab-output").click();
  await page.keyboard.press("ArrowRight");
  assert.equal(await page.getByTestId("tab-sharding").getAttribute("aria-selected"), "true");
  await page.keyboard.press("End");
  assert.equal(await page.getByTestId("tab-compare").getAttribute("aria-selected"), "true");
  await page.keyboard.press("ArrowLeft");
  await page.keyboard.press("ArrowLeft");
  assert.equal(await page.getByTestId("tab-schedule").getAttribute("aria-selected"), "true");
  await page.getByTestId("theme").click();
  const theme = await page.evaluate(() => document.documentElement.dataset.theme);
  await page.getByTestId("gantt").waitFor();
  await shot(`11-schedule-${theme}`);
  await page.getByTestId("tab-output").click();
  await shot(`12-output-${theme}`);
  await page.getByTestId("theme").click();
});

test("a generated 2k-op module propagates and updates after an edit (latency recorded)", async (t) => {
  const file = path.join(os.tmpdir(), `shardlab-2k-${process.pid}.mlir`);
  execFileSync("python3", [path.join(ROOT, "bench/gen_module.py"), "--ops", "2000", "-o", file], { stdio: "ignore" });
  const text = fs.readFileSync(file, "utf8");
  fs.rmSync(file);
  await gotoAndWait(`${origin}/#code=${LZ.compressToEncodedURIComponent(text)}`);
  assert.match(await page.getByTestId("status").textContent(), /propagated/);
  const m = await measureLatency(3);
  results.latency_ms["generated-2k-ops"] = Math.round(m.latency);
  results.core_ms["generated-2k-ops"] = Math.round(m.core);
  results.reply_ms["generated-2k-ops"] = Math.round(m.reply);
  results.core_stages_ms["generated-2k-ops"] = m.stages;
  await shot("13-generated-2k");
  results.trace_2k_edit_ms = await traceOf("trace-2k-edit", () => afterUpdate(() => page.keyboard.type(" ")));
  t.diagnostic(`2k-op edit, trace (out/browser/trace-2k-edit.json): ${JSON.stringify(results.trace_2k_edit_ms)}`);
  assert.ok(Object.keys(results.trace_2k_edit_ms).length > 0, "the trace has the page's tasks");
  // Speed is measured by benchmarks, not asserted here (a loaded 2-core
  // machine makes any bound flaky); the latencies are printed and saved.
  t.diagnostic(`2k ops: edit-to-update ${m.latency} ms (core ${m.core} ms, reply ${m.reply} ms)`);
  assert.ok(m.latency > 0, "an update was measured");
});

test("schedule: a counted loop is drawn once, marked ×N, and unfolds on request", async () => {
  await afterUpdate(() => page.getByTestId("examples").selectOption("schedule/scanned_layers"));
  await openTab("schedule");
  await page.getByTestId("gantt").waitFor();
  assert.match(await page.getByTestId("loops").textContent(), /while@\d+ ×8 \(constant bounds\)/);
  assert.match(await page.getByTestId("loop-label").textContent(), /^while@\d+ ×8.*the body runs 8 times/);
  assert.equal(await page.getByTestId("loop-cut").count(), 1);
  // Folded: one iteration's two all-gathers; the totals still count eight.
  const folded = await page.getByTestId("bar-collective").count();
  assert.equal(folded, 2);
  const step = await page.getByTestId("total-step").textContent();
  await page.getByTestId("bar-collective").first().hover();
  assert.match(await page.getByTestId("gantt-detail").textContent(), /stablehlo\.while@\d+#0/);
  await shot("11-schedule-loop-folded");
  await afterUpdate(() => page.getByTestId("set-fold_loops").uncheck());
  assert.equal(await page.getByTestId("bar-collective").count(), 16);
  assert.equal(await page.getByTestId("loop-cut").count(), 0);
  assert.equal(await page.getByTestId("total-step").textContent(), step, "folding is display only");
  await shot("12-schedule-loop-unfolded");
  await afterUpdate(() => page.getByTestId("set-fold_loops").check());
  assert.equal(await page.getByTestId("loop-cut").count(), 1);

  // A loop bounded by an argument: one iteration, until the setting says more.
  const scanned = fs.readFileSync(path.join(ROOT, "examples/schedule/scanned_layers.mlir"), "utf8");
  const uncounted = scanned.replace("%layers, SIGNED", "%n, SIGNED")
    .replace("{}, {\"data\"}, {}]>})\n    -> tensor<8192x4096xbf16>", "{}, {\"data\"}, {}]>}, %n: tensor<i32>)\n    -> tensor<8192x4096xbf16>");
  assert.notEqual(uncounted, scanned);
  assert.match(uncounted, /%n: tensor<i32>\)/);
  await afterUpdate(() => replaceText(uncounted));
  await page.getByTestId("loops").waitFor();
  assert.match(await page.getByTestId("loops").textContent(), /×1 \(unknown \(one iteration\)\)/);
  await afterUpdate(() => page.getByTestId("set-while_trip_count").fill("3").then(() => page.getByTestId("set-while_trip_count").press("Tab")));
  assert.match(await page.getByTestId("loops").textContent(), /×3 \(--while-trip-count\)/);
  assert.equal(await page.getByTestId("loop-label").count(), 1);
  await afterUpdate(() => page.getByTestId("set-while_trip_count").fill("0").then(() => page.getByTestId("set-while_trip_count").press("Tab")));

  // The all-gathers run beside the layers' GEMMs: said as not slowing
  // them, until a table measures that they do.
  const said = () => page.locator("li", { hasText: "overlap: " }).first().textContent();
  assert.match(await said(), /taken not to slow each other/);
  assert.equal(await page.getByTestId("total-contention").count(), 0);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "shardlab-overlap-"));
  const plain = path.join(dir, "h100.shardlab.json"), slowed = path.join(dir, "h100_overlap.shardlab.json");
  fs.writeFileSync(plain, JSON.stringify(scaledTable(1)));
  fs.writeFileSync(slowed, JSON.stringify({ ...scaledTable(1),
    overlap: { compute_slowdown: 1.5, comm_slowdown: 1.25, source: "the browser test" } }));
  await afterUpdate(() => page.getByTestId("table-file").setInputFiles(plain));
  await page.getByTestId("table-status").waitFor();
  const unslowed = await page.getByTestId("total-step").textContent();
  assert.equal(await page.getByTestId("total-contention").count(), 0);
  await afterUpdate(() => page.getByTestId("table-file").setInputFiles(slowed));
  await page.getByTestId("total-contention").waitFor();
  assert.ok(parseUs(await page.getByTestId("total-contention").textContent()) > 0);
  assert.ok(parseUs(await page.getByTestId("total-step").textContent()) > parseUs(unslowed), "slowed kernels lengthen the step");
  assert.match(await said(), /x1\.5 its time, a transfer beside a kernel x1\.25 .*the browser test/);
  await shot("12b-schedule-overlap-slowdown");
  await afterUpdate(() => page.getByRole("button", { name: "use the preset's table" }).click());
  assert.equal(await page.getByTestId("total-contention").count(), 0);
  fs.rmSync(dir, { recursive: true, force: true });
});

/** "1.23 ms" / "456.00 µs" / "7.0 ns" (dom.ts's fmtUs) in microseconds. */
function parseUs(text) {
  const m = /([\d.]+)\s*(ms|µs|ns)/.exec(text);
  assert.ok(m, `not a time: ${text}`);
  return Number(m[1]) * { ms: 1000, "µs": 1, ns: 1e-3 }[m[2]];
}

/** Sets the device count and waits for the comparison on that many devices
 * (not an earlier one still finishing: opening the tab compares the module
 * at the count the view already had). */
async function comparedOn(devices) {
  // A comparison the tab started on opening redraws the view when it ends,
  // input included: let it end first, and type again if a redraw still
  // took the typed count away before it was committed.
  await page.waitForFunction(() => !(document.querySelector("[data-testid=compare-status]")?.textContent ?? "")
    .includes("comparing…"), null, { timeout: 120_000 });
  for (let attempt = 0; attempt < 3; ++attempt) {
    await page.getByTestId("compare-devices").fill(String(devices));
    await page.getByTestId("compare-devices").press("Tab");
    if (await page.getByTestId("compare-devices").inputValue() === String(devices)) break;
  }
  await page.waitForFunction((n) => new RegExp(` on ${n} devices in `)
    .test(document.querySelector("[data-testid=compare-status]")?.textContent ?? ""), devices, { timeout: 120_000 });
}

async function compared(action) {
  const before = await page.evaluate(() => Number(document.body.dataset.compared ?? 0));
  await action();
  await page.waitForFunction((n) => Number(document.body.dataset.compared ?? 0) > n, before, { timeout: 120_000 });
}

test("compare: every candidate a row, sorted, with bars; Suggest says what to change and why", async () => {
  await afterUpdate(() => page.getByTestId("examples").selectOption("schedule/megatron_block"));
  await compared(() => openTab("compare"));
  const rows = await page.getByTestId("compare-row").count();
  const failed = await page.getByTestId("compare-failed").count();
  assert.ok(rows + failed >= 9, `${rows} rows + ${failed} failed`);
  const names = await page.getByTestId("compare-name").allTextContents();
  assert.equal(names.filter((n) => n.endsWith("(as written)")).length, 1);
  const steps = (await page.getByTestId("compare-step").allTextContents()).map(parseUs);
  assert.deepEqual(steps, [...steps].sort((a, b) => a - b));
  assert.match((await page.getByTestId("compare-failed").allTextContents()).join("\n"), /DP: dimension 0 of %x \(size 2\) does not divide by 8 devices/);
  assert.equal(await page.locator("[data-testid=compare-bars] svg rect").count() >= rows, true);
  // The block as written (tensor parallelism) is not the fastest: the tab
  // says why the fastest is faster, collective by collective.
  const why = await page.getByTestId("compare-why").textContent();
  assert.match(why, new RegExp(`Why ${names[0].replace(/[.*+?^${}()|[\]\\]/g, "\\$&")} is faster than the module as written`));
  assert.match(why, /all-reduce: .*no longer needed|all-reduce: .*->/);
  assert.match(why, /exposed communication: [\d.]+ ms -> [\d.]+ ms/);
  await shot("17-compare");
  await page.getByTestId("compare-why").scrollIntoViewIfNeeded();
  await shot("17b-compare-why");

  await page.getByTestId("suggest").click();
  await page.getByTestId("suggestion").first().waitFor({ timeout: 60_000 });
  const first = await page.getByTestId("suggestion").first().textContent();
  assert.match(first, /change: /);
  assert.match(first, /why: /);
  await shot("18-suggest");

  // Another device count compares again (4: the batch of 2 splits 2 ways).
  await comparedOn(4);
  assert.match(await page.getByTestId("compare-status").textContent(), /on 4 devices/);
  await openTab("output");
});


// Issue 45's measure, in the browser itself: a 70B Llama training step
// (bench/models/gen_training_step.py, the arguments bench/RESULTS.md names)
// compared and searched on 64 and 1,024 devices. The times are recorded in
// results.json and printed, not asserted (benchmarks judge speed); what is
// asserted is that each ran: rows, and a search that evaluated strategies.
test("compare and suggest: a 70B Llama step on 64 and 1,024 devices, timed in Chromium", async (t) => {
  const text = llama70bStep({ microBatch: 1024 });
  await gotoAndWait(`${origin}/?compare-70b#code=${LZ.compressToEncodedURIComponent(text)}`);
  await openTab("compare");
  for (const devices of [64, 1024]) {
    await comparedOn(devices);
    const status = await page.getByTestId("compare-status").textContent();
    const m = /(\d+) strategies on (\d+) devices in (\d+) ms/.exec(status);
    assert.ok(m, status);
    assert.equal(Number(m[2]), devices, status);
    assert.ok(Number(m[1]) >= 20, status);
    results.compare_ms[`llama-70b-${devices}-devices`] = Number(m[3]);
    // Each row says what fills the device at its peak: its arguments and
    // the largest temporaries, named by op.
    const peaks = await page.getByTestId("compare-peak").allTextContents();
    assert.ok(peaks.length >= Number(m[1]) / 2, `${peaks.length} peak accounts`);
    for (const peak of peaks.slice(0, 5))
      assert.match(peak, /^peak [\d.]+ [KMGT]?i?B: arguments [\d.]+ [KMGT]?i?B; largest live while stablehlo\.\S+ runs: stablehlo\.\S+ [\d.]+/);
    t.diagnostic(`compare, 70B Llama: ${status}`);
    await page.getByTestId("suggest").click();
    const searched = page.locator("[data-testid=suggestions] .muted").first();
    await searched.waitFor({ timeout: 120_000 });
    const said = await searched.textContent();
    const s = /Searched (\d+) strategies in (\d+) ms/.exec(said);
    assert.ok(s, said);
    assert.ok(Number(s[1]) >= 1, said);
    // The step as written keeps every parameter whole: the line says why it
    // has no time.
    assert.match(said, /as written: not evaluated \(does not fit: its arguments alone take [\d.]+ GiB per device/);
    results.compare_ms[`llama-70b-${devices}-devices-suggest`] = Number(s[2]);
    if (devices === 64) {
      // On 64 devices no layout the search tries fits this step in 80 GB
      // (only splitting its micro-batch does, which the comparison's rows
      // do and the search does not): a suggestion that does not fit says so
      // beside its time. (On 1,024 devices FSDP fits, and what the search
      // reaches in its budget decides whether any shown does not.)
      const marks = await page.getByTestId("suggestion-memory").allTextContents();
      assert.ok(marks.length >= 1, "no suggestion marked as not fitting");
      for (const mark of marks) assert.match(mark, /peak memory [\d.]+ [GT]iB > [\d.]+ [GT]iB: does not fit/);
    }
    t.diagnostic(`suggest, 70B Llama on ${devices} devices: ${said}`);
  }
  await shot("19b-compare-70b-1024");
  await openTab("output");
});

// The same model written with 16 micro-batches of 64 sequences (gradient
// accumulation): its layer loops sit in a micro-batch loop, so pipeline
// candidates (PP×DP, PP×DP×TP) are cut and scheduled too. Compared on a
// pool of 2 workers (web/src/pool.ts): on 64 devices, every row shown
// (recomputed and split ones too) is the package's one-instance row.
test("compare: the 70B Llama step with micro-batches, pipelines included, timed in Chromium", async (t) => {
  const text = llama70bStep({ microBatch: 64, gradAccum: 16 });
  await gotoAndWait(`${origin}/?compare-70b-pp&workers=2#code=${LZ.compressToEncodedURIComponent(text)}`);
  await openTab("compare");
  for (const devices of [64, 1024]) {
    await comparedOn(devices);
    const status = await page.getByTestId("compare-status").textContent();
    const m = /(\d+) strategies on (\d+) devices in (\d+) ms/.exec(status);
    assert.ok(m, status);
    assert.equal(Number(m[2]), devices, status);
    const names = await page.getByTestId("compare-name").allTextContents();
    assert.ok(names.some((n) => /^PP×DP/.test(n)), names.join(", "));
    assert.match(status, / on 2 workers/);
    results.compare_ms[`llama-70b-16-micro-batches-${devices}-devices`] = Number(m[3]);
    if (devices === 64) {
      const { pipeline: _p, ...settings } = apiSettings("pipeline");
      const one = api.compareStrategies(text, { ...settings, devices });
      assert.equal(one.ok, true, one.error);
      const ran = one.rows.filter((row) => row.ok);
      assert.ok(ran.some((row) => / recompute | mb÷|recompute \w+$/.test(row.name)), "derived rows");
      assert.deepEqual(names.map((n) => n.replace(" (as written)", "")), ran.map((row) => row.name));
      assert.deepEqual(await page.getByTestId("compare-step").allTextContents(), ran.map((row) => asShown(row.step_time_us)));
      // The first row that does not fit: its details say what fills the
      // device at its peak, as the package's own row does.
      const over = ran.findIndex((row) => row.fits === false);
      assert.ok(over >= 0, "some rows do not fit on 64 devices");
      assert.equal(await page.getByTestId("compare-peak").count(), ran.length);
      const peak = page.getByTestId("compare-peak").nth(over);
      const said = await peak.textContent();
      assert.ok(said.includes(`while ${ran[over].peak_at} runs: ${ran[over].largest_live[0].name}`), said);
      await page.locator("tr.shardings details").nth(over).evaluate((d) => { d.open = true; });
      await peak.scrollIntoViewIfNeeded();
      await shot("19d-compare-peak");
    }
    t.diagnostic(`compare, 70B Llama with 16 micro-batches: ${status}; best ${names[0]}`);
  }
  await shot("19c-compare-70b-pipelines-1024");
  await openTab("output");
});

/** The page's formatting of a time (web/src/dom.ts fmtUs), written again. */
function asShown(us) {
  if (us >= 1000) return `${(us / 1000).toFixed(2)} ms`;
  if (us >= 1) return `${us.toFixed(2)} µs`;
  return `${(us * 1000).toFixed(1)} ns`;
}

/** The settings the page starts with (web/src/state.ts), as the API takes them. */
function apiSettings(pipeline, extra = {}) {
  return { pipeline, preset: "h100", gpus_per_node: 0, sol_options: "", overlap_limit: 1,
    estimator: "real", while_trip_count: 0, ...extra };
}

test("numbers shown are the API's for the same input and settings; a slower table gives a longer step", async () => {
  await afterUpdate(() => page.getByTestId("examples").selectOption("playground/tensor_parallel_mlp"));
  await openTab("schedule");
  await afterUpdate(() => page.getByTestId("set-preset").selectOption("a100"));
  await afterUpdate(() => page.getByTestId("set-preset").selectOption("h100"));
  await page.getByTestId("gantt").waitFor();
  const text = await editorText();
  const pipeline = await page.getByTestId("pipeline").inputValue();
  const reply = api.schedule(text, apiSettings(pipeline));
  assert.equal(reply.ok, true, reply.error);
  const r = reply.report;
  assert.equal(await page.getByTestId("total-step").textContent(), asShown(r.step_time_us));
  assert.equal(await page.getByTestId("total-compute").textContent(), asShown(r.compute_us));
  assert.equal(await page.getByTestId("total-exposed").textContent(), asShown(r.exposed_comm_us));
  // Not vacuous: other settings give other numbers than those shown.
  const a100 = api.schedule(text, apiSettings(pipeline, { preset: "a100" }));
  assert.notEqual(await page.getByTestId("total-step").textContent(), asShown(a100.report.step_time_us));
  const collectives = Object.values(r.per_kind ?? {}).reduce((n, k) => n + (k.count ?? 0), 0);
  assert.ok(collectives > 0, "the example has collectives");
  assert.equal(await page.getByTestId("bar-collective").count(), collectives);

  // Collectives 20 times slower: the page and the API agree, and the step is longer.
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "shardlab-slow-"));
  const slow = path.join(dir, "slow_collectives.shardlab.json");
  const table = scaledTable(20);
  fs.writeFileSync(slow, JSON.stringify(table));
  await afterUpdate(() => page.getByTestId("table-file").setInputFiles(slow));
  const slower = api.schedule(text, apiSettings(pipeline, { table }));
  assert.equal(slower.ok, true, slower.error);
  assert.equal(await page.getByTestId("total-step").textContent(), asShown(slower.report.step_time_us));
  assert.ok(slower.report.step_time_us > r.step_time_us, "slower collectives, a longer step");
  assert.ok(slower.report.compute_us === r.compute_us, "the same compute");
  await page.getByRole("button", { name: "use the preset's table" }).click();
  fs.rmSync(dir, { recursive: true, force: true });

  // Compare: every row the API returns, in its order, with its step time.
  // 8 devices, set here: the view keeps the count an earlier test chose, and
  // does not compare again what it already shows.
  await afterUpdate(() => page.getByTestId("examples").selectOption("schedule/megatron_block"));
  await openTab("compare");
  await comparedOn(8);
  const mega = await editorText();
  const { pipeline: _p, ...compareSettings } = apiSettings(pipeline);
  const comparison = api.compareStrategies(mega, { ...compareSettings, devices: 8, svg: true });
  assert.equal(comparison.ok, true, comparison.error);
  const ran = comparison.rows.filter((row) => row.ok);
  const names = (await page.getByTestId("compare-name").allTextContents()).map((n) => n.replace(" (as written)", ""));
  assert.deepEqual(names, ran.map((row) => row.name));
  assert.deepEqual(await page.getByTestId("compare-step").allTextContents(), ran.map((row) => asShown(row.step_time_us)));
  assert.equal(await page.getByTestId("compare-failed").count(), comparison.rows.length - ran.length);
  await openTab("output");
});

test("the exposed time says what only the step's results read", async () => {
  // A ZeRO-2 step on 512 devices: the new weights are gathered after the
  // update and returned, read by no kernel of the step.
  const file = path.join(os.tmpdir(), `shardlab-zero2-${process.pid}.mlir`);
  execFileSync("python3", [path.join(ROOT, "bench/models/gen_training_step.py"), "--arch", "gpt", "--layers", "2",
    "--hidden", "1024", "--heads", "8", "--seq", "1024", "--micro-batch", "64", "--mesh", "dp=64,tp=8",
    "--layout", "zero2", "-o", file], { stdio: "ignore" });
  const text = fs.readFileSync(file, "utf8");
  fs.rmSync(file);
  await page.goto("about:blank");
  await gotoAndWait(`${origin}/#code=${LZ.compressToEncodedURIComponent(text)}`);
  await openTab("schedule");
  const r = api.schedule(text, apiSettings(await page.getByTestId("pipeline").inputValue()));
  assert.equal(r.ok, true, r.error);
  const only = r.report.results_only_comm_us;
  assert.ok(only > 0 && only <= r.report.exposed_comm_us, `${only} of ${r.report.exposed_comm_us}`);
  const want = `of it ${asShown(only)} read by no kernel`;
  await page.waitForFunction((w) => document.querySelector("[data-testid=total-results-only]")?.textContent === w, want);
  assert.equal(await page.getByTestId("total-exposed").textContent(), asShown(r.report.exposed_comm_us));
  await shot("14b-schedule-results-only");
  // An example whose collectives all feed kernels: no such line.
  await afterUpdate(() => page.getByTestId("examples").selectOption("schedule/megatron_block"));
  await openTab("schedule");
  await page.getByTestId("gantt").waitFor();
  const small = api.schedule(await editorText(), apiSettings(await page.getByTestId("pipeline").inputValue()));
  assert.equal(small.report.results_only_comm_us ?? 0, 0);
  assert.equal(await page.getByTestId("total-results-only").count(), 0);
});

test("the step time carries the published runs' band, or says why there is none", async () => {
  // An 8-device example: nothing published at that scale, and the page says so.
  await afterUpdate(() => page.getByTestId("examples").selectOption("schedule/megatron_block"));
  await openTab("schedule");
  await page.getByTestId("gantt").waitFor();
  const pipeline = await page.getByTestId("pipeline").inputValue();
  const small = api.schedule(await editorText(), apiSettings(pipeline));
  assert.equal(small.report.validation.band_kind, "none");
  assert.equal(await page.getByTestId("total-band").textContent(), small.report.validation.note);
  // A training step on 512 devices (bench/models): the API's band, shown.
  const file = path.join(os.tmpdir(), `shardlab-step-${process.pid}.mlir`);
  execFileSync("python3", [path.join(ROOT, "bench/models/gen_training_step.py"), "--arch", "gpt", "--layers", "2",
    "--hidden", "1024", "--heads", "8", "--seq", "1024", "--micro-batch", "64", "--mesh", "dp=64,tp=8",
    "--layout", "fsdp", "-o", file], { stdio: "ignore" });
  const text = fs.readFileSync(file, "utf8");
  fs.rmSync(file);
  // A new document: the page reads the link's code when it loads.
  await page.goto("about:blank");
  await gotoAndWait(`${origin}/#code=${LZ.compressToEncodedURIComponent(text)}`);
  await openTab("schedule");
  const big = api.schedule(text, apiSettings(await page.getByTestId("pipeline").inputValue()));
  assert.equal(big.ok, true, big.error);
  const v = big.report.validation;
  assert.notEqual(v.band_kind, "none");
  assert.ok(v.runs >= 3 && v.measured_over_estimate_p10 <= v.measured_over_estimate_p90);
  // The schedule of the new module replaces whatever the page showed first:
  // wait for this module's band itself (any other change of the text could
  // be an earlier schedule's).
  const want = `${v.measured_over_estimate_p10.toFixed(2)}–${v.measured_over_estimate_p90.toFixed(2)}×`;
  await page.waitForFunction((w) => {
    const band = document.querySelector("[data-testid=total-band]");
    return band && band.textContent.includes(w);
  }, want);
  const band = await page.getByTestId("total-band").textContent();
  assert.ok(band.includes(want), band);
  const title = await page.getByTestId("total-band").getAttribute("title");
  assert.match(title, /bench\/published/);
  assert.ok(title.includes(`estimated with ${v.schedule}`), title);
  await shot("14-schedule-validation-band");
});

test("schedule: fused kernels list their ops on hover; fusion off costs every op", async () => {
  await afterUpdate(() => page.getByTestId("examples").selectOption("schedule/megatron_block"));
  await openTab("schedule");
  await page.getByTestId("gantt").waitFor();
  const bars = page.getByTestId("bar-compute");
  const fusedBars = await bars.count();
  // The detail of the first bar whose hover text matches `wanted`.
  const hoverUntil = async (wanted) => {
    let shown = "";
    for (let i = 0; i < fusedBars && !wanted.test(shown); ++i) {
      await bars.nth(i).hover();
      shown = await page.getByTestId("gantt-detail").textContent();
    }
    return shown;
  };
  const shown = await hoverUntil(/fusion of \d+ ops/);
  assert.match(shown, /(loop|reduction) fusion of \d+ ops: .*@\d+/);
  assert.match(shown, /reads [\d.]+ [KMG]?i?B, writes/);
  await shot("13-schedule-fused-kernel");
  // The softmax's sum also writes the exponential the divide reads (XLA's
  // multi-output fusion): one bar says so.
  const second = await hoverUntil(/also writes/);
  assert.match(second, /reduction fusion of \d+ ops: .*exponential@\d+.*\nalso writes exponential@\d+ for the kernels after it/);
  const fusedStep = parseUs(await page.getByTestId("total-step").textContent());
  await afterUpdate(() => page.getByTestId("set-fusion").uncheck());
  assert.ok(await bars.count() > fusedBars, "without fusion every op is a bar");
  const unfusedStep = parseUs(await page.getByTestId("total-step").textContent());
  assert.ok(unfusedStep > fusedStep, `unfused ${unfusedStep} µs should exceed fused ${fusedStep} µs`);
  await afterUpdate(() => page.getByTestId("set-fusion").check());
});

test("compare: 8+ candidates of a generated 2k-op module, timed", async (t) => {
  const file = path.join(os.tmpdir(), `shardlab-2k-compare-${process.pid}.mlir`);
  // One function (@block_0, the entry) of about 2k ops.
  execFileSync("python3", [path.join(ROOT, "bench/gen_module.py"), "--ops", "2000", "--layers-per-func", "60", "-o", file], { stdio: "ignore" });
  const text = fs.readFileSync(file, "utf8");
  fs.rmSync(file);
  // A query makes it a new page (a new hash alone would not reload).
  await gotoAndWait(`${origin}/?compare-2k#code=${LZ.compressToEncodedURIComponent(text)}`);
  await compared(() => openTab("compare"));
  const status = await page.getByTestId("compare-status").textContent();
  const m = /(\d+) strategies on (\d+) devices in (\d+) ms/.exec(status);
  assert.ok(m, status);
  assert.ok(Number(m[1]) >= 9, status);
  results.compare_ms["generated-2k-ops"] = Number(m[3]);
  t.diagnostic(`compare, generated 2k ops: ${status}`);
  await shot("19-compare-2k");
  await openTab("output");
});

test("graph: ops and values by sharding, collectives marked, linked to the editor and the Gantt", async () => {
  await gotoAndWait(`${origin}/?example=playground/tensor_parallel_mlp`);
  const graphs = await page.evaluate(() => Number(document.body.dataset.graphs ?? 0));
  await openTab("graph");
  await page.waitForFunction((n) => Number(document.body.dataset.graphs ?? 0) > n, graphs);
  await page.getByTestId("graph").waitFor();
  assert.ok(await page.getByTestId("graph-node-op").count() >= 3);
  assert.ok(await page.getByTestId("graph-node-argument").count() >= 2);
  const collective = page.getByTestId("graph-node-collective").first();
  assert.ok(await page.getByTestId("graph-node-collective").count() >= 1, "the explicit all-reduce is a node");
  assert.match(await page.getByTestId("graph-legend").textContent(), /@mesh/);
  const line = Number(await collective.getAttribute("data-line"));
  assert.ok(line > 0);
  await collective.click();
  await page.locator(`[data-testid=graph-node-collective][data-line="${line}"].selected`).waitFor();
  await shot("20-graph");
  await openTab("schedule");
  await page.getByTestId("gantt").waitFor();
  await page.locator("rect.bar.highlight").first().waitFor();
  await shot("21-gantt-linked");
  await openTab("output");
});

// A pool's worker that cannot start (its script refused here, as a
// browser out of memory for one more instance would fail it) fails the
// comparison with why, instead of leaving it "comparing…" for ever.
test("compare: a worker that cannot start fails the comparison, saying so", async () => {
  const other = await context.newPage();
  let started = 0;
  await other.route(/\/assets\/worker-[^/]*\.js$/, (route) => (started++ === 0 ? route.continue() : route.abort()));
  await gotoAndWait(`${origin}/?workers=2&example=schedule/megatron_block`, other);
  await other.getByTestId("tab-compare").click();
  const error = other.getByTestId("compare-error");
  await error.waitFor({ timeout: 60_000 });
  assert.match(await error.textContent(), /the core's worker failed/);
  assert.equal(started, 2, "the page's worker and one more");
  await other.close();
});

test("budgets: weight, no console errors, no foreign requests; latencies printed", (t) => {
  let raw = 0, gzip = 0;
  const walk = (dir) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(p);
      else {
        const data = fs.readFileSync(p);
        raw += data.length;
        gzip += zlib.gzipSync(data, { level: 9 }).length;
      }
    }
  };
  walk(DIST);
  results.weight = { raw_bytes: raw, gzip_bytes: gzip };
  assert.ok(gzip <= 2 * 1024 * 1024, `gzip weight ${gzip}`);
  for (const [name, ms] of Object.entries(results.latency_ms))
    t.diagnostic(`edit-to-update ${name}: ${ms} ms`);
  for (const [name, ms] of Object.entries(results.compare_ms))
    t.diagnostic(`compare ${name}: ${ms} ms`);
  assert.deepEqual(foreignRequests, []);
  assert.deepEqual(consoleErrors, []);
});
