// The playground is a static site: `npm run build` writes web/dist/ with
// relative asset URLs, so it loads from any static server or sub-path.
import { defineConfig } from "vite";
import { fileURLToPath } from "node:url";

const wasmIndex = fileURLToPath(new URL("../wasm/dist/index.js", import.meta.url));
// The comparison's phases alone, without the core's loader (the page's
// main thread runs them; only the workers load the core).
const comparePhases = fileURLToPath(new URL("../wasm/dist/compare-phases.js", import.meta.url));

export default defineConfig({
  base: "./",
  resolve: { alias: { "@shardlab/wasm/compare-phases": comparePhases, "@shardlab/wasm": wasmIndex } },
  worker: { format: "es" },
  build: { target: "es2022", outDir: "dist", emptyOutDir: true, chunkSizeWarningLimit: 4096 },
  server: { fs: { allow: [".."] } },
});
