// One benchmark case's WebAssembly side, in a process of its own (forked by
// bench/run_all.mjs): a fresh instance per case, so no case runs on the
// memory, caches and compiler queue an earlier (e.g. 100k-op) case left.
// Messages from the parent:
//   {case: {file, call, arg}, dist, warmUpMs, quick} -> loads and warms up,
//                                                       replies {ready: true}
//   {round: N} -> best of N calls, replies {ms, cpu_ms, ok}
import fs from "node:fs";
import path from "node:path";

let call = null;

async function prepare({ case: c, dist, warmUpMs, quick }) {
  const wasm = await (await import(path.join(dist, "shardlab.mjs"))).default();
  const { callWithText } = await import(path.join(dist, "boundary.js"));
  // Timed as the package calls it (wasm/src/boundary.ts): the text encoded
  // and copied in, the reply decoded to a string; JSON.parse not included.
  const source = fs.readFileSync(c.file, "utf8");
  const options = c.arg ? JSON.stringify(c.arg) : undefined;
  call = () => callWithText(wasm, c.call, source, options);
  // The engine compiles hot functions on a baseline tier first and
  // optimizes those that stay hot in the background (dynamic tiering):
  // calls for at least 3 and warmUpMs (at most 150), so the steady state
  // is what is compared.
  const start = performance.now();
  for (let i = 0; i < (quick ? 1 : 150); ++i) {
    call();
    if (quick || (i >= 2 && performance.now() - start > warmUpMs)) break;
  }
}

function round(times) {
  let wall = Infinity, cpu = Infinity, reply;
  for (let i = 0; i < times; ++i) {
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    reply = call();
    wall = Math.min(wall, performance.now() - t0);
    const used = process.cpuUsage(c0);
    cpu = Math.min(cpu, (used.user + used.system) / 1e3);
  }
  return { ms: wall, cpu_ms: cpu, ok: JSON.parse(reply).ok === true };
}

process.on("message", async (message) => {
  try {
    if (message.case) {
      await prepare(message);
      process.send({ ready: true });
    } else if (message.round) {
      process.send(round(message.round));
    }
  } catch (error) {
    process.send({ error: String(error?.stack ?? error) });
  }
});
