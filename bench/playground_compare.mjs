// The playground's comparison of a 70B Llama training step in headless
// Chromium (Debian's), on one worker and on a pool: the time the page shows
// for each writing (one batch of 1,024 sequences; 16 micro-batches of 64)
// on 64 and 1,024 devices, best of N, with the load average. Issue 45's
// measure (compare in the browser within 30 s) and what the pool of
// workers (web/src/pool.ts) buys.
//   node bench/playground_compare.mjs [--workers 1,2] [--repeats 1]
// Needs web/dist (bash scripts/build-web.sh) and web/node_modules.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { startServer } from "../scripts/serve-web.mjs";
import { llama70bStep } from "./models/llama70b.mjs";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const args = process.argv.slice(2);
const arg = (name, fallback) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : fallback;
};
const workerCounts = arg("--workers", "1,2").split(",").map(Number);
const repeats = Number(arg("--repeats", "1"));
const requireWeb = createRequire(path.join(ROOT, "web", "package.json"));
const { chromium } = requireWeb("playwright-core");
const LZ = requireWeb("lz-string");

/** Opens the compare tab of `text` on `workers` workers; the page's ms on `devices`. */
async function compareMs(page, origin, text, workers, devices) {
  await page.goto(`${origin}/?workers=${workers}#code=${LZ.compressToEncodedURIComponent(text)}`);
  await page.waitForFunction(() => (window.__shardlab?.updates ?? 0) >= 1, null, { timeout: 60_000 });
  await page.getByTestId("tab-compare").click();
  const status = page.getByTestId("compare-status");
  await page.waitForFunction(() => /strategies on \d+ devices/.test(
    document.querySelector("[data-testid=compare-status]")?.textContent ?? ""), null, { timeout: 300_000 });
  await page.getByTestId("compare-devices").fill(String(devices));
  await page.getByTestId("compare-devices").press("Tab");
  await page.waitForFunction((n) => new RegExp(` on ${n} devices in `)
    .test(document.querySelector("[data-testid=compare-status]")?.textContent ?? ""), devices, { timeout: 300_000 });
  const m = /(\d+) strategies on \d+ devices in (\d+) ms/.exec(await status.textContent());
  return { rows: Number(m[1]), ms: Number(m[2]) };
}

const server = await startServer(path.join(ROOT, "web", "dist"));
const origin = `http://127.0.0.1:${server.address().port}`;
const browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
  args: ["--no-sandbox", "--disable-gpu"] });
const loadBefore = os.loadavg()[0];
const lines = ["| writing | devices | rows | " + workerCounts.map((w) => `${w} worker${w > 1 ? "s" : ""}`).join(" | ") + " |",
  "|---|---:|---:|" + workerCounts.map(() => "---:").join("|") + "|"];
for (const [label, mb, ga] of [["1×1,024", 1024, 1], ["16×64", 64, 16]]) {
  const text = llama70bStep({ microBatch: mb, gradAccum: ga });
  for (const devices of [64, 1024]) {
    const best = {};
    let rows = 0;
    for (let r = 0; r < repeats; ++r)
      for (const workers of workerCounts) {
        const page = await browser.newPage();
        const got = await compareMs(page, origin, text, workers, devices);
        await page.close();
        rows = got.rows;
        best[workers] = Math.min(best[workers] ?? Infinity, got.ms);
      }
    lines.push(`| ${label} | ${devices} | ${rows} | ` + workerCounts.map((w) => `${(best[w] / 1000).toFixed(2)} s`).join(" | ") + " |");
    console.error(lines.at(-1));
  }
}
await browser.close();
server.close();
console.log(lines.join("\n"));
console.log(`\nload average ${loadBefore.toFixed(2)} before, ${os.loadavg()[0].toFixed(2)} after; ${os.cpus().length} cores`);
