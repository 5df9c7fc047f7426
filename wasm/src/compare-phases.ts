// compareStrategies spread over several instances of the core (workers,
// worker threads, or just several loaded modules): the comparison's phases
// (schemas/api/strategies.schema.json, ComparePhase) run in turn, each on
// every instance with its share of the plans. The base candidates' rows,
// merged in plan order, go to every instance again for its share of the
// recomputation choices, then of the micro-batch splits, then of the
// interleaved pipelines; the first
// instance sorts all rows and says why the fastest wins. The result is the
// one-instance comparison's but for elapsed_ms, the wall time here.
//
//   const pool = [await load(), await load()];
//   const c = await comparePhased(pool.map((sl) => sl.compareStrategies), text, { devices: 64 });
import type { Candidate, CompareOptions, Comparison } from "./api-types.js";

/** One instance's compareStrategies, called directly or through a worker. */
export type CompareCall = (text: string, options: CompareOptions) => Comparison | Promise<Comparison>;

const PHASES = ["base", "recompute", "split", "interleave"] as const;

/** The shares' rows in the order of the phase's plans. */
function merged(shares: Comparison[]): Candidate[] {
  const indexed = shares.flatMap((s) => (s.rows ?? []).map((row, k) => ({ at: s.plan_indices?.[k] ?? 0, row })));
  return indexed.sort((a, b) => a.at - b.at).map((x) => x.row);
}

/**
 * compareStrategies(text, options) with its evaluations shared by
 * `instances` (one instance: a plain call). An error reply of any phase is
 * the reply.
 */
export async function comparePhased(instances: CompareCall[], text: string, options: CompareOptions = {}): Promise<Comparison> {
  if (instances.length === 0) return { ok: false, error: "comparePhased: no instances" };
  if (instances.length === 1) return instances[0](text, options);
  const start = Date.now();
  const { svg: _svg, ...phaseOptions } = options;
  let rows: Candidate[] = [];
  let pruned = 0;
  for (const name of PHASES) {
    const shares = await Promise.all(instances.map((compare, share) =>
      compare(text, { ...phaseOptions, phase: { name, share, shares: instances.length, rows } })));
    const failed = shares.find((s) => !s.ok);
    if (failed) return failed;
    rows = rows.concat(merged(shares));
    pruned += shares[0].pruned_by_bound ?? 0;
  }
  const finish = await instances[0](text, { ...options, phase: { name: "finish", rows, pruned_by_bound: pruned } });
  return finish.ok ? { ...finish, elapsed_ms: Date.now() - start } : finish;
}
