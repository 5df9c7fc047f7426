// What each simulated device holds before and after each collective: the
// module partitioned by its own shardings (propagation, explicit
// collectives, the per-device program) and run by the core's interpreter on
// random inputs, checked against the global run (the `execute` method).
// Runs on request, not on every edit: a module's run may take a while.
import { h } from "../dom";
import type { ExecuteResult, ElementValue, TensorValue } from "@shardlab/wasm";

/** The run shown: what it was computed from and when. */
export interface DeviceValues {
  result: ExecuteResult | null;
  running: boolean;
  /** The text changed since the run. */
  stale: boolean;
  ms: number;
}

/** Elements shown per tensor; a larger one shows its first ones and range. */
export const SHOWN_ELEMENTS = 16;

function fmtElement(v: ElementValue): string {
  if (Array.isArray(v)) return `${fmtElement(v[0])}${Number(v[1]) < 0 ? "" : "+"}${fmtElement(v[1])}i`;
  if (typeof v === "string") return v;
  return Number.isInteger(v) ? String(v) : Number(v.toPrecision(4)).toString();
}

function fmtTensor(t: TensorValue): string {
  const values = t.values.map(fmtElement).join(", ");
  if (!t.elided) return `[${values}]`;
  const range = t.min !== undefined && t.max !== undefined ? `, ${fmtElement(t.min)} … ${fmtElement(t.max)}` : "";
  return `[${values}, …] (${t.elements} elements${range})`;
}

function statusLine(r: ExecuteResult): HTMLElement {
  const p = r.partition;
  if (!p) return h("p", { class: "error", "data-testid": "values-status" }, r.error ?? "did not run");
  const verdict = p.status === "match" ? (p.exact ? "match the global run bit for bit" : "match the global run within tolerance")
    : p.status === "mismatch" ? `differ from the global run (${p.stage}: ${p.message})` : `not run (${p.message})`;
  return h("p", { "data-testid": "values-status", class: p.status === "mismatch" ? "error" : "" },
    `${p.devices} simulated devices: results ${verdict}` +
    (p.checks_run ? `; ${p.checks_passed} of ${p.checks_run} of the module's checks passed on the devices.` : "."));
}

function stepTable(step: NonNullable<ExecuteResult["collectives"]>[number]): HTMLElement {
  return h("table", { class: "values", "data-testid": "values-table" },
    h("thead", {}, h("tr", {}, h("th", {}, "device"), h("th", {}, "before"), h("th", {}, "after"))),
    h("tbody", {}, step.devices.map((d) => h("tr", { "data-testid": "values-device" },
      h("td", {}, `dev ${d.id}`),
      h("td", { class: "mono" }, d.before.map(fmtTensor).join("; ")),
      h("td", { class: "mono" }, d.after.map(fmtTensor).join("; "))))));
}

/**
 * The section under the device grid: a button to run, then the verdict and
 * one block per collective step (those from the cursor's line open).
 */
export function deviceValuesSection(state: DeviceValues, cursorLine: number, onRun: () => void, onJump: (line: number) => void): HTMLElement {
  const button = h("button", { "data-testid": "values-run", onclick: onRun, disabled: state.running },
    state.running ? "Running…" : state.result ? "Run again" : "Run on simulated devices");
  const intro = h("p", { class: "muted" },
    "Partitions the module by its shardings, runs the per-device program on simulated devices with random inputs, and shows what each device holds before and after each collective.");
  const r = state.result;
  if (!r) return h("section", { class: "device-values" }, h("h3", {}, "Values on the devices"), intro, button);
  const steps = r.collectives ?? [];
  const note = state.stale ? h("p", { class: "muted" }, "The text changed since this run.") : null;
  const blocks = steps.map((step, i) => {
    const types = step.devices[0] ? `${step.devices[0].before.map((t) => t.type).join(", ")} → ${step.devices[0].after.map((t) => t.type).join(", ")}` : "";
    return h("details", { open: step.line === cursorLine || steps.length === 1, "data-testid": "values-step", "data-line": step.line },
      h("summary", {}, `${i + 1}. ${step.op.replace("stablehlo.", "")} `,
        step.line ? h("a", { href: "#", onclick: (e: Event) => { e.preventDefault(); onJump(step.line); } }, `line ${step.line}`) : "",
        " ", h("span", { class: "mono muted" }, types)),
      stepTable(step));
  });
  const none = steps.length ? null : h("p", { class: "muted" }, "The per-device program has no collective.");
  const more = r.collectives_elided ? h("p", { class: "muted" }, `${r.collectives_elided} more collective steps not shown.`) : null;
  return h("section", { class: "device-values" }, h("h3", {}, "Values on the devices"), intro,
    h("p", {}, button, " ", h("span", { class: "muted" }, `${state.ms.toFixed(0)} ms`)), note, statusLine(r), none, ...blocks, more);
}
