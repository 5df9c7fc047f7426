#!/usr/bin/env node
// A tiny static file server for the built playground (web/dist): GET/HEAD
// only, files under the root only, MIME types for what Vite emits. Used by
// scripts/run.sh and the browser tests.
//   node scripts/serve-web.mjs [--port 8173] [--host 127.0.0.1] [DIR]
import http from "node:http";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const TYPES = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".json": "application/json",
  ".wasm": "application/wasm",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".txt": "text/plain; charset=utf-8",
};

/** Starts serving `root`; resolves to the listening server (port 0: any). */
export function startServer(root, { port = 0, host = "127.0.0.1" } = {}) {
  const base = path.resolve(root);
  const server = http.createServer((req, res) => {
    if (req.method !== "GET" && req.method !== "HEAD") {
      res.writeHead(405).end();
      return;
    }
    const url = new URL(req.url ?? "/", "http://localhost");
    let file = path.normalize(path.join(base, decodeURIComponent(url.pathname)));
    if (!file.startsWith(base)) {
      res.writeHead(403).end();
      return;
    }
    if (fs.existsSync(file) && fs.statSync(file).isDirectory()) file = path.join(file, "index.html");
    fs.readFile(file, (err, data) => {
      if (err) {
        res.writeHead(404, { "content-type": "text/plain" }).end("not found");
        return;
      }
      res.writeHead(200, { "content-type": TYPES[path.extname(file)] ?? "application/octet-stream", "cache-control": "no-cache" });
      res.end(req.method === "HEAD" ? undefined : data);
    });
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => resolve(server));
  });
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  let port = 8173, host = "127.0.0.1", root = path.join(path.dirname(fileURLToPath(import.meta.url)), "..", "web", "dist");
  for (let i = 0; i < args.length; i++) {
    if (args[i] === "--port") port = Number(args[++i]);
    else if (args[i] === "--host") host = args[++i];
    else root = args[i];
  }
  if (!fs.existsSync(path.join(root, "index.html"))) {
    console.error(`serve-web: ${root}/index.html not found (build with: cd web && npm run build)`);
    process.exit(1);
  }
  const server = await startServer(root, { port, host });
  const { port: actual } = server.address();
  console.log(`shardlab playground: http://${host}:${actual}/?example=hello  (Ctrl-C to stop)`);
}
