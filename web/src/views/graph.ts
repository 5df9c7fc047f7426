// The Graph tab: the entry function as a dataflow graph (the core's
// dataflowGraph): ops as nodes in layers (each op one row below the lowest
// of its inputs), values as edges colored by their sharding (a legend names
// each sharding), collectives in red. The editor is the hub that links the
// views: clicking a node moves the cursor to its op, the node at the cursor
// is outlined, and the Schedule tab's Gantt outlines that op's bars.
import { h, s, fill } from "../dom";
import type { DataflowGraph, GraphEdge, GraphNode } from "@shardlab/wasm";

const NODE_W = 132, NODE_H = 30, GAP_X = 18, GAP_Y = 34, PAD = 12;
const PALETTE = ["#4c78a8", "#f58518", "#54a24b", "#b279a2", "#9d755d", "#72b7b2", "#eeca3b", "#ff9da6", "#bab0ac", "#e45756"];
const UNSHARDED = "#9aa0a6";

/** One color per distinct sharding, in order of first appearance. */
export function shardingColors(edges: GraphEdge[]): Map<string, string> {
  const colors = new Map<string, string>();
  for (const e of edges)
    if (e.sharding && !colors.has(e.sharding)) colors.set(e.sharding, PALETTE[colors.size % PALETTE.length]);
  return colors;
}

interface Placed {
  node: GraphNode;
  x: number;
  y: number;
}

/** Layers by longest path from the arguments; within a layer, ordered by the mean position of the node's inputs. */
export function layout(g: DataflowGraph): Placed[] {
  const nodes = g.nodes ?? [];
  const inputs = new Map<number, number[]>();
  for (const e of g.edges ?? []) inputs.set(e.to, [...(inputs.get(e.to) ?? []), e.from]);
  const layer = new Map<number, number>();
  // Node ids follow program order, so every input comes first.
  for (const n of nodes) layer.set(n.id, Math.max(-1, ...(inputs.get(n.id) ?? []).map((i) => layer.get(i) ?? 0)) + 1);
  const rows: GraphNode[][] = [];
  for (const n of nodes) (rows[layer.get(n.id) ?? 0] ??= []).push(n);
  const column = new Map<number, number>();
  const placed: Placed[] = [];
  rows.forEach((row, depth) => {
    const weight = (n: GraphNode) => {
      const from = inputs.get(n.id) ?? [];
      return from.length ? from.reduce((sum, i) => sum + (column.get(i) ?? 0), 0) / from.length : n.id * 1e-6;
    };
    const ordered = depth === 0 ? row : [...row].sort((a, b) => weight(a) - weight(b));
    ordered.forEach((n, i) => {
      column.set(n.id, i);
      placed.push({ node: n, x: PAD + i * (NODE_W + GAP_X), y: PAD + depth * (NODE_H + GAP_Y) });
    });
  });
  return placed;
}

function shortName(n: GraphNode): string {
  return n.kind === "argument" || n.kind === "output" ? (n.kind === "output" ? "return" : n.name) : n.name.replace(/^(stablehlo|sdy|func|mhlo)\./, "");
}

export function renderGraph(root: HTMLElement, g: DataflowGraph | null, cursorLine: number, onSelect: (line: number) => void): void {
  if (!g) return fill(root, h("p", { class: "muted" }, "Drawing the dataflow graph…"));
  if (!g.ok) return fill(root, h("p", { class: "error", "data-testid": "graph-error" }, g.error ?? "the module does not verify"));
  const placed = layout(g);
  const at = new Map(placed.map((p) => [p.node.id, p]));
  const colors = shardingColors(g.edges ?? []);
  const width = Math.max(...placed.map((p) => p.x + NODE_W), 200) + PAD;
  const height = Math.max(...placed.map((p) => p.y + NODE_H), 60) + PAD;
  const svg = s("svg", { width, height, viewBox: `0 0 ${width} ${height}`, class: "graph", role: "img", "aria-label": `dataflow graph of @${g.function}`, "data-testid": "graph" });
  for (const e of g.edges ?? []) {
    const a = at.get(e.from), b = at.get(e.to);
    if (!a || !b) continue;
    const x1 = a.x + NODE_W / 2, y1 = a.y + NODE_H, x2 = b.x + NODE_W / 2, y2 = b.y;
    const mid = (y1 + y2) / 2;
    svg.append(s("path", { d: `M${x1},${y1} C${x1},${mid} ${x2},${mid} ${x2},${y2}`, class: "edge", stroke: e.sharding ? colors.get(e.sharding) ?? UNSHARDED : UNSHARDED, "data-testid": "graph-edge" },
      s("title", {}, `${e.type}${e.sharding ? ` ${e.sharding}` : " (no sharding)"}`)));
  }
  for (const p of placed) {
    const n = p.node;
    const selected = n.line > 0 && n.line === cursorLine;
    const group = s("g", { class: `node ${n.kind}${selected ? " selected" : ""}`, tabindex: 0, "data-testid": `graph-node-${n.kind}`, "data-line": n.line },
      s("rect", { x: p.x, y: p.y, width: NODE_W, height: NODE_H, rx: 5 }),
      s("text", { x: p.x + NODE_W / 2, y: p.y + 19, "text-anchor": "middle" }, shortName(n).slice(0, 20)),
      s("title", {}, `${n.name}${n.line ? ` (line ${n.line})` : ""}\n${n.label}`));
    if (n.line > 0) {
      group.addEventListener("click", () => onSelect(n.line));
      group.addEventListener("keydown", (e) => { if ((e as KeyboardEvent).key === "Enter") onSelect(n.line); });
    }
    svg.append(group);
  }
  const collectives = (g.nodes ?? []).filter((n) => n.kind === "collective").length;
  fill(root,
    h("div", { class: "muted", "data-testid": "graph-summary" },
      `@${g.function} after "${g.pipeline}": ${g.nodes?.length ?? 0} nodes, ${g.edges?.length ?? 0} values, ${collectives} collective(s)`,
      g.truncated ? " (the first 600 ops; the rest are left out)" : "", ". Click an op to find it in the editor."),
    h("div", { class: "legend", "data-testid": "graph-legend" },
      [...colors].slice(0, 12).map(([sharding, color]) => h("span", { class: "key" }, h("span", { class: "swatch", style: `background:${color}` }), sharding)),
      h("span", { class: "key" }, h("span", { class: "swatch", style: `background:${UNSHARDED}` }), "no sharding"),
      h("span", { class: "key" }, h("span", { class: "swatch collective" }), "collective")),
    h("div", { class: "graph-scroll" }, svg));
}
