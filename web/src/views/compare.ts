// The Compare tab: the module's candidate sharding strategies side by side
// (the core's compareStrategies: step time, compute, exposed and hidden
// communication, collectives by kind, peak memory per device against its
// capacity), drawn with the same bars `shardlab-schedule --compare --svg`
// writes, each row's shardings on request, why the fastest beats the module
// as written, rows whose collectives no model could cost marked, the
// arguments' roles, and a Suggest button that runs the bounded search
// (suggestShardings) and says what each suggestion changes and why it is
// faster.
import { h, fmtUs, fmtBytes, fill } from "../dom";
import type { Candidate, Comparison, Suggestions } from "@shardlab/wasm";

export interface CompareState {
  /** Devices asked for; 0: the module's mesh, or 8. */
  devices: number;
  comparison: Comparison | null;
  comparing: boolean;
  compareMs: number;
  workers: number; ///< the workers the comparison was spread over
  suggestions: Suggestions | null;
  suggesting: boolean;
}

export interface CompareHandlers {
  onDevices(devices: number): void;
  onSuggest(): void;
}

function collectives(row: Candidate): (string | HTMLElement)[] {
  const kinds = row.collectives.length
    ? row.collectives.map((c) => `${c.kind} ×${c.count} (${fmtBytes(c.bytes)})`).join(", ")
    : "none";
  // A collective no model could cost took XLA's 5 ms fallback: the time
  // is not an estimate of it, and the row says so.
  if (!row.uncosted_collectives) return [kinds];
  return [kinds, h("span", { class: "error", "data-testid": "compare-uncosted",
    title: row.assumptions.filter((a) => a.startsWith("not costed:")).join("\n") },
  ` — ${row.uncosted_collectives} not costed (5 ms each, XLA's fallback)`)];
}

function memory(row: Candidate): string {
  const peak = fmtBytes(row.peak_memory_bytes);
  if (!row.capacity_bytes) return peak;
  return row.fits === false ? `${peak} > ${fmtBytes(row.capacity_bytes)}: does not fit` : `${peak} of ${fmtBytes(row.capacity_bytes)}`;
}

// What fills the device at the row's peak: its arguments, then the
// largest temporaries live while the op at the peak runs.
function peakAccount(row: Candidate): string {
  if (!row.peak_at) return "";
  const live = row.largest_live.map((b) => `${b.name} ${fmtBytes(b.bytes)}`).join("; ");
  return `peak ${fmtBytes(row.peak_memory_bytes)}: arguments ${fmtBytes(row.argument_bytes)}; ` +
    `largest live while ${row.peak_at} runs: ${live}`;
}

function rowView(row: Candidate, rank: number): HTMLElement[] {
  const main = h("tr", { "data-testid": "compare-row", class: row.is_user ? "user" : "" },
    h("td", {}, String(rank)),
    h("td", { "data-testid": "compare-name" }, row.name, row.is_user ? " (as written)" : ""),
    h("td", { class: "num", "data-testid": "compare-step" }, fmtUs(row.step_time_us)),
    h("td", { class: "num" }, fmtUs(row.compute_us)),
    h("td", { class: "num" }, fmtUs(row.exposed_comm_us)),
    h("td", { class: "num" }, fmtUs(row.hidden_comm_us)),
    h("td", { class: row.fits === false ? "error" : "", title: peakAccount(row) || undefined }, memory(row)),
    h("td", {}, ...collectives(row)));
  const shardings = h("tr", { class: "shardings" },
    h("td", {}),
    h("td", { colspan: 7 },
      h("details", {},
        h("summary", {}, row.description, row.mesh ? ` — mesh ${row.mesh}` : ""),
        h("ul", {}, row.shardings.map((s) => h("li", {}, h("code", {}, `${s.name}: ${s.sharding}`)))),
        row.peak_at ? h("p", { class: "muted", "data-testid": "compare-peak" }, peakAccount(row)) : null)));
  return [main, shardings];
}

function table(c: Comparison): HTMLElement {
  const rows = c.rows ?? [];
  const ran = rows.filter((r) => r.ok);
  const failed = rows.filter((r) => !r.ok);
  return h("div", {},
    h("table", { class: "compare", "data-testid": "compare-table" },
      h("thead", {}, h("tr", {}, ["#", "candidate", "step", "compute", "exposed comm", "hidden comm", "peak memory / device", "collectives"].map((t) => h("th", {}, t)))),
      h("tbody", {}, ran.flatMap((row, i) => rowView(row, i + 1)))),
    failed.length ? h("div", { class: "failed" },
      h("div", { class: "muted" }, "Not evaluated:"),
      h("ul", {}, failed.map((row) => h("li", { "data-testid": "compare-failed" }, h("b", {}, row.name), `: ${row.error ?? row.stage}`)))) : null);
}

// Why the fastest row that fits beats the module as written, collective kind
// by kind (the core's own reasons), when it does.
function why(c: Comparison): HTMLElement | null {
  const reasons = c.why_fastest ?? [];
  if (!reasons.length || !c.why_fastest_row) return null;
  return h("div", { class: "why", "data-testid": "compare-why" },
    h("div", { class: "muted" }, `Why ${c.why_fastest_row} is faster than the module as written:`),
    h("ul", {}, reasons.map((r) => h("li", {}, r))));
}

function roles(c: Comparison): HTMLElement {
  return h("details", { class: "roles" },
    h("summary", {}, `Arguments (${c.args?.length ?? 0}): how each was classified`),
    h("ul", {}, (c.args ?? []).map((a) => h("li", {}, h("code", {}, a.name), ` ${a.shape.join("×") || "scalar"} — ${a.role}: ${a.reason}`))));
}

function suggestionsView(s: Suggestions): HTMLElement {
  if (!s.ok) return h("div", { class: "error", "data-testid": "suggest-error" }, s.error ?? "the search failed");
  const found = s.suggestions ?? [];
  return h("div", { class: "suggestions", "data-testid": "suggestions" },
    h("div", { class: "muted" }, `Searched ${s.evaluated} strategies in ${(s.elapsed_ms ?? 0).toFixed(0)} ms${s.budget_exhausted ? " (budget spent)" : ""}; as written: ${s.user?.ok ? fmtUs(s.user.step_time_us) : `not evaluated${s.user?.error ? ` (${s.user.error})` : ""}`}.`),
    found.map((g, i) => h("div", { class: "suggestion", "data-testid": "suggestion" },
      h("div", {}, h("b", {}, `${i + 1}. ${g.candidate.name}`), `: ${fmtUs(g.candidate.step_time_us)}`, g.speedup > 0 ? ` (${g.speedup.toFixed(2)}× the module as written)` : "",
        g.candidate.fits === false ? h("span", { class: "error", "data-testid": "suggestion-memory" }, ` — peak memory ${memory(g.candidate)}`) : null),
      h("div", { class: "muted" }, g.candidate.description),
      h("ul", {},
        g.changes.map((c) => h("li", {}, "change: ", h("code", {}, c))),
        g.reasons.map((r) => h("li", {}, "why: ", r))))));
}

export function renderCompare(root: HTMLElement, state: CompareState, hs: CompareHandlers): void {
  const devices = h("input", { type: "number", min: 0, class: "num", value: state.devices, "data-testid": "compare-devices",
    onchange: (e: Event) => hs.onDevices(Math.max(0, Math.floor(Number((e.target as HTMLInputElement).value) || 0))) });
  const suggest = h("button", { type: "button", "data-testid": "suggest", disabled: state.suggesting || !state.comparison?.ok,
    onclick: () => hs.onSuggest() }, state.suggesting ? "Searching…" : "Suggest");
  const c = state.comparison;
  const bars = h("div", { class: "compare-bars", "data-testid": "compare-bars" });
  // The core's own SVG (text escaped there), the picture the CLI writes.
  if (c?.ok && c.svg) bars.innerHTML = c.svg;
  fill(root,
    h("div", { class: "settings" },
      h("label", {}, "Devices (0 = the module's mesh, or 8) ", devices),
      suggest,
      h("span", { class: "muted", "data-testid": "compare-status" },
        state.comparing ? "comparing…" : c?.ok ? `${c.rows?.length ?? 0} strategies on ${c.devices} devices in ${state.compareMs.toFixed(0)} ms` +
          (state.workers > 1 ? ` on ${state.workers} workers` : "") +
          (c.pruned_by_bound ? `; ${c.pruned_by_bound} more not tried (the cheap bound)` : "") : "")),
    c && !c.ok ? h("div", { class: "error", "data-testid": "compare-error" }, c.error ?? "comparison failed") : null,
    state.suggestions ? suggestionsView(state.suggestions) : null,
    c?.ok ? bars : null,
    c?.ok ? table(c) : null,
    c?.ok ? why(c) : null,
    c?.ok ? roles(c) : null);
}
