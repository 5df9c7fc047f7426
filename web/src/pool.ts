// The workers a comparison is spread over (wasm/src/compare-phases.ts runs
// its phases): the page's own worker and, from the first comparison on,
// more of them, so a page that never compares loads the core once.
import { comparePhased } from "@shardlab/wasm/compare-phases";
import type { CompareOptions, Comparison } from "@shardlab/wasm";
import { CoreClient, type Reply } from "./client";

/** Workers a comparison uses: `?workers=N`, else the cores (at most 4). */
export function poolSize(): number {
  const asked = Number(new URLSearchParams(location.search).get("workers"));
  if (Number.isInteger(asked) && asked >= 1) return Math.min(asked, 16);
  return Math.max(1, Math.min(4, navigator.hardwareConcurrency || 1));
}

export class ComparePool {
  private extra: CoreClient[] = [];

  /** `primary` is the page's own worker, the first of the pool. */
  constructor(private primary: CoreClient, readonly size: number) {}

  /** compareStrategies(text, options) over the pool's workers. */
  async compare(text: string, options: CompareOptions): Promise<Reply<Comparison>> {
    while (this.extra.length + 1 < this.size) this.extra.push(new CoreClient());
    const start = performance.now();
    const calls = [this.primary, ...this.extra].map((worker) =>
      async (t: string, o: CompareOptions) => (await worker.call<Comparison>("compareStrategies", t, o)).result);
    const result = await comparePhased(calls, text, options);
    return { result, ms: performance.now() - start, stale: false };
  }
}
