// Step-through of what propagation decided, in the driver's order: a
// slider over the steps; per step the op, the layer position (user-priority
// round, op-priority level, strategy), and for each new axis the factor, the
// tensor that received it and the tensor it came from.
import { h, fill } from "../dom";
import type { PropagationTrace, TraceStep } from "@shardlab/wasm";

function position(step: TraceStep): string {
  const parts = [`strategy ${step.strategy}`];
  if (step.user_priority >= 0) parts.push(`user-priority round p${step.user_priority}`);
  if (step.op_priority_level >= 0) parts.push(`op-priority level ${step.op_priority_level}`);
  return parts.join(" · ");
}

/** "operand 1" -> "operand 1 (%arg1)" using the step's tensor names. */
function tensorLabel(step: TraceStep, node: string): string {
  const [side, index] = node.split(" ");
  const name = (side === "operand" ? (step.operands ?? []) : side === "result" ? (step.results ?? []) : [])[Number(index)];
  return name ? `${node} (${name})` : node;
}

export function renderTrace(root: HTMLElement, trace: PropagationTrace | null, index: number, onStep: (i: number) => void, onJump: (line: number) => void): void {
  if (!trace) return void fill(root, h("p", { class: "muted" }, "Computing the trace…"));
  if (!trace.ok) return void fill(root, h("p", { class: "muted" }, trace.error ?? "no trace"));
  const steps = trace.steps ?? [];
  const seeds = trace.seeds ?? [];
  const seedList = h("details", {}, h("summary", {}, `${seeds.length} user-written axes (seeds)`),
    h("ul", {}, seeds.map((s) => h("li", { class: "mono" }, `${s.slot.value ?? `result ${s.slot.result}`}: "${s.axis}" (${s.origin}${s.priority ? `, p${s.priority}` : ""})`))));
  if (!steps.length) return void fill(root, h("p", { class: "muted", "data-testid": "trace-empty" }, "Propagation changed no sharding."), seedList);
  const i = Math.min(Math.max(index, 0), steps.length - 1);
  const step = steps[i];
  const slider = h("input", { type: "range", min: 0, max: steps.length - 1, value: i, "aria-label": "trace step", "data-testid": "trace-slider",
    oninput: (e: Event) => onStep(Number((e.target as HTMLInputElement).value)) });
  fill(root,
    h("div", { class: "row" },
      h("button", { type: "button", onclick: () => onStep(i - 1), disabled: i === 0, "aria-label": "previous step", "data-testid": "trace-prev" }, "◀"),
      slider,
      h("button", { type: "button", onclick: () => onStep(i + 1), disabled: i === steps.length - 1, "aria-label": "next step", "data-testid": "trace-next" }, "▶"),
      h("span", { "data-testid": "trace-position" }, `step ${i + 1} / ${steps.length}`),
      h("span", { class: "muted" }, `(step-${step.index})`)),
    h("h2", { "data-testid": "trace-op" }, step.op || step.kind, " ",
      step.line ? h("button", { type: "button", class: "link", onclick: () => onJump(step.line) }, `line ${step.line}`) : null),
    h("p", { class: "muted" }, position(step), step.kind !== "op" ? ` · ${step.kind.replace(/_/g, " ")}` : ""),
    h("table", { class: "grid-table", "data-testid": "trace-decisions" },
      h("thead", {}, h("tr", {}, ["axis", "factor", "to", "from"].map((c) => h("th", {}, c)))),
      h("tbody", {}, step.decisions.map((d) => h("tr", {},
        h("td", { class: "mono" }, d.axis), h("td", {}, `${d.symbol} (#${d.factor})`),
        h("td", {}, tensorLabel(step, d.target)), h("td", {}, tensorLabel(step, d.source)))))),
    step.group_copies ? h("p", { class: "muted" }, `${step.group_copies} sharding-group member(s) copied the new sharding.`) : null,
    h("p", { class: "muted" }, `operands: ${(step.operands ?? []).join(", ") || "—"} · results: ${(step.results ?? []).join(", ") || "—"}`),
    seedList);
}
