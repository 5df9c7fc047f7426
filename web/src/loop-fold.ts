// Folding a schedule's loop iterations for the Gantt chart. The scheduler
// runs a stablehlo.while's body once per iteration and names each op of
// iteration k with a path segment `<while>@<line>#k` (outer loops first):
//
//   stablehlo.dot_general@17/stablehlo.while@9#2        dot of iteration 2
//   sdy.all_gather@9/stablehlo.while@9#0-start          a collective of iteration 0
//   stablehlo.add@30/stablehlo.while@20#0/stablehlo.while@25#3   nested loop
//
// Folded, the chart keeps iteration 0 of every loop (ops whose every index is
// 0) and cuts the time from the end of iteration 0 to the end of the loop's
// last iteration, so the body shows once; the loop is labelled "×N" over
// iteration 0 and a break mark stands where the time was cut. Axis labels stay
// real times (`unmap`), and the totals are the report's, which count N.
import type { ScheduledOp } from "@shardlab/wasm";

export interface FoldedLoop {
  /** The while's own segment, e.g. `stablehlo.while@9`. */
  name: string;
  /** Iterations the schedule ran (the highest index seen plus one). */
  trips: number;
  /** Iteration 0's span and the loop's end, in real time. */
  start_us: number;
  end0_us: number;
  end_us: number;
}

export interface FoldedSchedule {
  ops: ScheduledOp[];
  loops: FoldedLoop[];
  /** Cut real-time intervals (end of iteration 0, end of the loop], merged and sorted. */
  cuts: [number, number][];
  /** Real time to folded time; a time inside a cut maps to the cut's start. */
  map(t: number): number;
  /** Folded time to real time (a cut's start maps to its real start). */
  unmap(t: number): number;
}

interface Iteration {
  key: string; // enclosing path + the while's segment, unique per loop instance
  name: string;
  index: number;
}

const ITERATION = /^(.+)#(\d+)$/;

/** The loop iterations an op runs in, outermost first. */
export function iterationsOf(opName: string): Iteration[] {
  const segments = opName.replace(/-(start|done)$/, "").split("/").slice(1);
  const out: Iteration[] = [];
  let prefix = "";
  for (const segment of segments) {
    const m = ITERATION.exec(segment);
    if (m) out.push({ key: `${prefix}/${m[1]}`, name: m[1], index: Number(m[2]) });
    prefix += `/${m ? `${m[1]}#${m[2]}` : segment}`;
  }
  return out;
}

function mergeCuts(cuts: [number, number][]): [number, number][] {
  const sorted = cuts.filter(([a, b]) => b > a).sort((x, y) => x[0] - y[0]);
  const merged: [number, number][] = [];
  for (const [a, b] of sorted) {
    const last = merged[merged.length - 1];
    if (last && a <= last[1]) last[1] = Math.max(last[1], b);
    else merged.push([a, b]);
  }
  return merged;
}

function loopSpans(ops: ScheduledOp[]): FoldedLoop[] {
  const spans = new Map<string, FoldedLoop & { visible: boolean }>();
  for (const op of ops) {
    const its = iterationsOf(op.name);
    its.forEach((it, depth) => {
      // Only loops reached in iteration 0 of every enclosing loop are drawn.
      const visible = its.slice(0, depth).every((outer) => outer.index === 0);
      let span = spans.get(it.key);
      if (!span) {
        span = { name: it.name, trips: 0, start_us: Infinity, end0_us: -Infinity, end_us: -Infinity, visible };
        spans.set(it.key, span);
      }
      span.trips = Math.max(span.trips, it.index + 1);
      span.end_us = Math.max(span.end_us, op.end_us);
      if (it.index === 0 && its.slice(depth).every((inner) => inner.index === 0)) {
        span.start_us = Math.min(span.start_us, op.start_us);
        span.end0_us = Math.max(span.end0_us, op.end_us);
      }
    });
  }
  return [...spans.values()]
    .filter((s) => s.visible && s.trips > 1 && Number.isFinite(s.start_us))
    .map(({ visible: _, ...loop }) => loop);
}

/** The schedule with every loop shown once; the identity when nothing repeats. */
export function foldLoops(ops: ScheduledOp[]): FoldedSchedule {
  const loops = loopSpans(ops);
  const cuts = mergeCuts(loops.map((l) => [l.end0_us, l.end_us] as [number, number]));
  const map = (t: number): number => {
    let removed = 0;
    for (const [a, b] of cuts) {
      if (t <= a) break;
      removed += Math.min(t, b) - a;
    }
    return t - removed;
  };
  const unmap = (t: number): number => {
    for (const [a, b] of cuts) {
      if (t <= a) break;
      t += b - a;
    }
    return t;
  };
  const kept = ops.filter((op) => iterationsOf(op.name).every((it) => it.index === 0));
  return { ops: kept, loops, cuts, map, unmap };
}

/** The schedule as it ran, every iteration drawn. */
export function unfolded(ops: ScheduledOp[]): FoldedSchedule {
  return { ops, loops: [], cuts: [], map: (t) => t, unmap: (t) => t };
}
