// The estimated schedule: settings (hardware preset, topology, S-curve
// options, overlap limit, trip count of uncounted loops, estimator),
// performance tables by file picker or drag-and-drop, the totals, the loops
// with their trip counts, a Gantt chart with one track per stream (each
// loop body drawn once, marked ×N, unless unfolded; exposed communication
// highlighted, hover/focus details), the memory curve, and exports (Chrome
// trace for Perfetto, the JSON report).
import { h, s, fmtBytes, fmtUs, fill } from "../dom";
import type { HardwarePreset, ScheduleResult, ScheduledOp } from "@shardlab/wasm";
import type { Settings } from "../state";
import { foldLoops, unfolded, type FoldedLoop, type FoldedSchedule } from "../loop-fold";

export interface TableState {
  name: string;
  summary?: string;
  error?: string;
}

export interface ScheduleHandlers {
  onSettings(patch: Partial<Settings>): void;
  onTableFile(file: File): void;
  onClearTable(): void;
  onExportTrace(): void;
  onExportReport(): void;
}

function settingsForm(settings: Settings, presets: HardwarePreset[], table: TableState | null, devices: number, hs: ScheduleHandlers): HTMLElement {
  const preset = presets.find((p) => p.name === settings.preset);
  const perNode = settings.gpus_per_node || preset?.gpus_per_node || 8;
  const file = h("input", { type: "file", accept: ".json,.txtpb,.pbtxt,.txt", "data-testid": "table-file", "aria-label": "load a performance table",
    onchange: (e: Event) => { const f = (e.target as HTMLInputElement).files?.[0]; if (f) hs.onTableFile(f); } });
  const drop = h("div", { class: "drop", tabindex: 0, "data-testid": "table-drop" },
    "Drop a performance table here (shardlab JSON from the collectors, or XLA text-proto) or ", file,
    table ? h("div", { "data-testid": "table-status", class: table.error ? "error" : "ok" },
      table.error ? `${table.name}: ${table.error}` : `${table.name}: ${table.summary}`,
      table.error ? null : h("button", { type: "button", onclick: () => hs.onClearTable() }, "use the preset's table")) : null);
  drop.addEventListener("dragover", (e) => { e.preventDefault(); drop.classList.add("over"); });
  drop.addEventListener("dragleave", () => drop.classList.remove("over"));
  drop.addEventListener("drop", (e) => {
    e.preventDefault();
    drop.classList.remove("over");
    const f = e.dataTransfer?.files?.[0];
    if (f) hs.onTableFile(f);
  });
  const num = (key: "gpus_per_node" | "overlap_limit" | "while_trip_count", label: string, min: number) =>
    h("label", {}, label, " ", h("input", { type: "number", min, class: "num", value: settings[key], "data-testid": `set-${key}`,
      onchange: (e: Event) => hs.onSettings({ [key]: Math.max(min, Math.floor(Number((e.target as HTMLInputElement).value) || 0)) }) }));
  return h("div", { class: "settings" },
    h("label", {}, "Hardware ", h("select", { "data-testid": "set-preset", onchange: (e: Event) => hs.onSettings({ preset: (e.target as HTMLSelectElement).value }) },
      presets.map((p) => h("option", { value: p.name, selected: p.name === settings.preset }, `${p.name} (${p.device_name})`)))),
    num("gpus_per_node", "GPUs per node (0 = preset)", 0),
    h("span", { class: "muted" }, `→ ${devices} devices on ${Math.max(1, Math.ceil(devices / perNode))} node(s)`),
    num("overlap_limit", "Overlap limit", 1),
    num("while_trip_count", "Trip count of uncounted loops (0 = one)", 0),
    h("label", {}, h("input", { type: "checkbox", checked: settings.fusion, "data-testid": "set-fusion",
      onchange: (e: Event) => hs.onSettings({ fusion: (e.target as HTMLInputElement).checked }) }), " fuse ops into kernels as XLA does"),
    h("label", {}, "Estimator ", h("select", { "data-testid": "set-estimator", onchange: (e: Event) => hs.onSettings({ estimator: (e.target as HTMLSelectElement).value as Settings["estimator"] }) },
      h("option", { value: "real", selected: settings.estimator === "real" }, "cost model"),
      h("option", { value: "approximate", selected: settings.estimator === "approximate" }, "XLA approximate (1/1000/5000)"))),
    h("label", {}, "S-curve options ", h("input", { value: settings.sol_options, placeholder: "nic_speed_gbps=400,rtt_us=5", "data-testid": "set-sol",
      onchange: (e: Event) => hs.onSettings({ sol_options: (e.target as HTMLInputElement).value.trim() }) })),
    drop);
}

function totals(r: NonNullable<ScheduleResult["report"]>): HTMLElement {
  const item = (label: string, value: string, id: string) => h("div", { class: "total" }, h("div", { class: "muted" }, label), h("div", { class: "big", "data-testid": id }, value));
  return h("div", { class: "totals" },
    h("div", { class: "total" }, h("div", { class: "muted" }, "step time"), h("div", { class: "big", "data-testid": "total-step" }, fmtUs(r.step_time_us)),
      validationBand(r)),
    h("div", { class: "total" }, h("div", { class: "muted" }, "compute"),
      h("div", { class: "big", "data-testid": "total-compute" }, fmtUs(r.compute_us)),
      contentionLine(r)),
    h("div", { class: "total" }, h("div", { class: "muted" }, "exposed comm"),
      h("div", { class: "big", "data-testid": "total-exposed" }, fmtUs(r.exposed_comm_us)),
      resultsOnlyLine(r)),
    item("hidden comm", fmtUs(r.hidden_comm_us ?? r.comm_us - r.exposed_comm_us), "total-hidden"),
    h("div", { class: "total" }, h("div", { class: "muted" }, "peak memory"),
      h("div", { class: "big", "data-testid": "total-memory" }, fmtBytes(r.peak_memory_bytes) + memoryFit(r)),
      peakLine(r)));
}

/** What fills the device at the peak: the largest temporaries live, by op (all of them on hover). */
function peakLine(r: NonNullable<ScheduleResult["report"]>): HTMLElement | null {
  const m = r.memory_per_device;
  if (!m?.peak_at || !m.largest_live?.length) return null;
  const named = m.largest_live.map((b) => `${b.name} (line ${b.line}) ${fmtBytes(b.bytes)}`);
  const rest = m.other_live?.count ? [`${m.other_live.count} more, ${fmtBytes(m.other_live.bytes)}`] : [];
  return h("div", { class: "muted band", "data-testid": "total-peak",
    title: [`at the peak, while ${m.peak_at} runs:`, `parameters ${fmtBytes(m.parameter_bytes ?? 0)}`, ...named, ...rest].join("\n") },
  `largest live: ${m.largest_live.slice(0, 2).map((b) => `${b.name.split("/")[0].replace(/^stablehlo\./, "")} ${fmtBytes(b.bytes)}`).join(", ")}`);
}

/**
 * What published runs say of estimates like this one (bench/published):
 * "real steps 0.20–0.36× (8 runs)", the step time that range gives on hover.
 */
function validationBand(r: NonNullable<ScheduleResult["report"]>): HTMLElement | null {
  const v = r.validation;
  if (!v) return null;
  if (v.band_kind === "none") return h("div", { class: "muted band", "data-testid": "total-band", title: v.basis }, v.note);
  const lo = v.measured_over_estimate_p10, hi = v.measured_over_estimate_p90;
  const of = v.band_kind === v.kind ? `${v.runs} ${v.kind} runs` : `${v.runs} runs of every kind`;
  return h("div", { class: "muted band", "data-testid": "total-band",
    title: `${v.kind} estimate. Published training runs (${v.basis}), estimated with ${v.schedule}, measured ` +
      `${lo.toFixed(2)}–${hi.toFixed(2)}× their estimate (p10–p90 over ${of}): ` +
      `here ${fmtUs(lo * r.step_time_us)} – ${fmtUs(hi * r.step_time_us)}.` },
    `published runs: ${lo.toFixed(2)}–${hi.toFixed(2)}× (${of})`);
}

/** Of the exposed time, what collectives only the step's results read take (a next step could hide it). */
function resultsOnlyLine(r: NonNullable<ScheduleResult["report"]>): HTMLElement | null {
  const us = r.results_only_comm_us ?? 0;
  if (us <= 0) return null;
  return h("div", { class: "muted band", "data-testid": "total-results-only",
    title: "Collectives whose results no kernel of the step reads, only its results (such as the new weights' " +
      "gathers after a sharded update): exposed in any schedule of this one step; a framework that starts the " +
      "next step under them could hide them." },
    `of it ${fmtUs(us)} read by no kernel`);
}

/** What kernels lost running beside transfers, when the table measured that they slow each other. */
function contentionLine(r: NonNullable<ScheduleResult["report"]>): HTMLElement | null {
  const us = r.contention_us ?? 0;
  if (us <= 0) return null;
  return h("div", { class: "muted band", "data-testid": "total-contention",
    title: "Kernels running while a collective's transfer is in flight take longer (NCCL's kernels share the GPU's SMs " +
      "and memory bandwidth): the table's overlap entry says how much; the step's compute stream lost this to it. " +
      "Its factors and their source are among the assumptions below." },
    `+ ${fmtUs(us)} beside transfers`);
}

/** " of 80 GiB" when the step fits the device, " > 80 GiB: does not fit" when not. */
function memoryFit(r: NonNullable<ScheduleResult["report"]>): string {
  const fit = r.memory_per_device as { capacity_bytes?: number; fits?: boolean } | undefined;
  if (!fit || !fit.capacity_bytes) return "";
  return fit.fits ? ` of ${fmtBytes(fit.capacity_bytes)}` : ` > ${fmtBytes(fit.capacity_bytes)}: does not fit`;
}

function opDetails(op: ScheduledOp): string {
  const lines = [`${op.name}  (${op.kind}, ${op.stream})`, `${fmtUs(op.start_us)} → ${fmtUs(op.end_us)}  (${fmtUs(op.end_us - op.start_us)})`];
  if (typeof op.exposed_us === "number" && op.exposed_us > 0) lines.push(`exposed ${fmtUs(op.exposed_us)}`);
  if (op.fusion) {
    const ops = op.fusion.ops.map((o) => o.replace(/^stablehlo\./, ""));
    lines.push(`${op.fusion.kind} of ${ops.length} ops: ${ops.join(", ")}`);
    if (op.fusion.second_outputs?.length)
      lines.push(`also writes ${op.fusion.second_outputs.map((o) => o.replace(/^stablehlo\./, "")).join(", ")} for the kernels after it (multi-output fusion)`);
    lines.push(`reads ${fmtBytes(op.fusion.bytes_read)}, writes ${fmtBytes(op.fusion.bytes_written)}`);
  }
  if (typeof op.cost_explanation === "string") lines.push(op.cost_explanation.split("\n").filter((l) => !l.startsWith("neighbour")).join("\n"));
  return lines.join("\n");
}

/** The report's loops (trip count and where it came from) and the fold switch. */
function loopsLine(r: NonNullable<ScheduleResult["report"]>, settings: Settings, hs: ScheduleHandlers): HTMLElement {
  const loops = r.loops ?? [];
  return h("div", { class: "loops", "data-testid": "loops" },
    h("span", { class: "muted" }, "Loops: "),
    loops.map((l, i) => h("span", {}, i ? "; " : "", `${l.name.replace(/^stablehlo\./, "")} ×${l.trip_count} (${l.source})`)),
    " ",
    h("label", {}, h("input", { type: "checkbox", checked: settings.fold_loops, "data-testid": "set-fold_loops",
      onchange: (e: Event) => hs.onSettings({ fold_loops: (e.target as HTMLInputElement).checked }) }), " draw each loop body once"));
}

function loopLabel(loop: FoldedLoop): string {
  return `${loop.name.replace(/^stablehlo\./, "")} ×${loop.trips}`;
}

function gantt(r: NonNullable<ScheduleResult["report"]>, fold: FoldedSchedule, detail: HTMLElement, line: number): SVGElement {
  const ops = fold.ops.filter((o) => o.end_us > o.start_us || o.kind === "collective");
  const streams = [...new Set(r.ops.map((o) => o.stream))].sort((a, b) => (a === "compute" ? -1 : b === "compute" ? 1 : a.localeCompare(b)));
  const W = 720, L = 96, row = 30, top = fold.loops.length ? 36 : 20;
  const realEnd = Math.max(r.step_time_us, ...r.ops.map((o) => o.end_us), 1e-9);
  const end = fold.map(realEnd);
  const x = (t: number) => L + (Math.max(fold.map(t), 0) / end) * (W - L - 10);
  const bottom = top + streams.length * row;
  const svg = s("svg", { viewBox: `0 0 ${W} ${bottom + 20}`, class: "gantt", role: "img", "aria-label": "schedule timeline", "data-testid": "gantt" });
  for (let k = 0; k <= 4; k++) {
    // The right edge is the step's end even when a fold ends there.
    const t = k === 4 ? realEnd : fold.unmap((end * k) / 4);
    svg.append(s("line", { x1: x(t), x2: x(t), y1: top - 4, y2: bottom, class: "tick" }),
      s("text", { x: x(t), y: 12, class: "axis-label", "text-anchor": k === 0 ? "start" : k === 4 ? "end" : "middle" }, fmtUs(t)));
  }
  streams.forEach((name, i) => svg.append(s("text", { x: 4, y: top + i * row + 17, class: "track-label" }, name)));
  for (const loop of fold.loops) {
    const x0 = x(loop.start_us), x1 = Math.max(x(loop.end0_us), x0 + 2);
    const folded = `${fmtUs(loop.end_us - loop.end0_us)} of iterations 2–${loop.trips} folded`;
    svg.append(s("path", { d: `M${x0},${top - 4} V${top - 10} H${x1} V${top - 4}`, class: "loop-bracket" }),
      s("text", { x: x0 + 2, y: top - 13, class: "loop-label", "data-testid": "loop-label" }, loopLabel(loop),
        s("title", {}, `${loop.name}: the body runs ${loop.trips} times; iteration 1 is drawn, ${folded}`)));
  }
  for (const [a, b] of fold.cuts)
    svg.append(s("line", { x1: x(a), x2: x(a), y1: top - 4, y2: bottom, class: "loop-cut", "data-testid": "loop-cut" },
      s("title", {}, `${fmtUs(b - a)} of later loop iterations folded here`)));
  for (const op of ops) {
    const i = streams.indexOf(op.stream);
    const exposed = typeof op.exposed_us === "number" && op.exposed_us > 0;
    const w = Math.max(x(op.end_us) - x(op.start_us), 2);
    const rect = s("rect", { x: x(op.start_us), y: top + i * row + 3, width: w, height: row - 6, rx: 2, tabindex: 0,
      class: `bar ${op.kind}${exposed ? " exposed" : ""}${line > 0 && op.line === line ? " highlight" : ""}`, "data-testid": `bar-${op.kind}` },
      s("title", {}, opDetails(op)));
    const show = () => { detail.textContent = opDetails(op); };
    rect.addEventListener("mouseenter", show);
    rect.addEventListener("focus", show);
    svg.append(rect);
    const label = op.name.replace(/\/.*$/, "").replace(/@\d+(-start)?$/, "").replace(/^stablehlo\./, "");
    if (w > label.length * 6.2 + 6)
      svg.append(s("text", { x: x(op.start_us) + 3, y: top + i * row + 19, class: "bar-label" }, label));
  }
  return svg;
}

function memoryCurve(r: NonNullable<ScheduleResult["report"]>, fold: FoldedSchedule): SVGElement {
  const W = 720, H = 90, L = 96;
  const pts = r.memory_curve.filter((p) => Number.isFinite(p[0]) && Number.isFinite(p[1]));
  const end = fold.map(Math.max(r.step_time_us, ...pts.map((p) => p[0]), 1e-9));
  const peak = Math.max(r.peak_memory_bytes, ...pts.map((p) => p[1]), 1);
  // From the lowest point (parameters stay live) to the peak, so changes show.
  const low = Math.min(peak, ...pts.map((p) => p[1]));
  const span = Math.max(peak - low, peak * 0.01);
  const x = (t: number) => L + (Math.max(fold.map(t), 0) / end) * (W - L - 10);
  const y = (b: number) => H - 8 - ((b - low) / span) * (H - 20);
  let d = "";
  let last = pts.length ? pts[0][1] : 0;
  pts.forEach((p, i) => { d += `${i ? "L" : "M"}${x(p[0]).toFixed(1)},${y(i ? last : p[1]).toFixed(1)} L${x(p[0]).toFixed(1)},${y(p[1]).toFixed(1)} `; last = p[1]; });
  return s("svg", { viewBox: `0 0 ${W} ${H}`, class: "memory", role: "img", "aria-label": `memory curve, peak ${fmtBytes(peak)}`, "data-testid": "memory-curve" },
    s("text", { x: 4, y: 14, class: "track-label" }, "memory"),
    s("text", { x: 4, y: 32, class: "axis-label" }, `peak ${fmtBytes(peak)}`),
    s("text", { x: 4, y: H - 8, class: "axis-label" }, `low ${fmtBytes(low)}`),
    s("path", { d, class: "mem-line" }));
}

/** `line`: the editor's cursor line; the bars of the op written there are outlined. */
export function renderSchedule(root: HTMLElement, result: ScheduleResult | null | undefined, settings: Settings, presets: HardwarePreset[], table: TableState | null, hs: ScheduleHandlers, line = 0): void {
  const r = result?.ok ? result.report : undefined;
  const devices = Number((r?.topology as { num_devices?: number } | undefined)?.num_devices ?? 1);
  const detail = h("pre", { class: "detail", "data-testid": "gantt-detail", "aria-live": "polite" }, "Hover or focus a bar for its op, times and cost model.");
  const hasLoops = Boolean(r?.loops?.length);
  const fold = r && settings.fold_loops ? foldLoops(r.ops) : unfolded(r?.ops ?? []);
  fill(root,
    settingsForm(settings, presets, table, devices, hs),
    result && !result.ok ? h("p", { class: "error", "data-testid": "schedule-error" }, `schedule: ${result.error ?? "failed"}`) : null,
    r ? totals(r) : h("p", { class: "muted" }, result ? "" : "Estimating the schedule… (it needs a module that verifies)."),
    r && hasLoops ? loopsLine(r, settings, hs) : null,
    r ? gantt(r, fold, detail, line) : null,
    r ? memoryCurve(r, fold) : null,
    r ? detail : null,
    r && r.assumptions.length ? h("ul", { class: "muted" }, r.assumptions.map((a) => h("li", {}, a))) : null,
    h("div", { class: "row" },
      h("button", { type: "button", onclick: () => hs.onExportTrace(), disabled: !r, "data-testid": "export-trace" }, "Download Chrome trace (Perfetto)"),
      h("button", { type: "button", onclick: () => hs.onExportReport(), disabled: !r, "data-testid": "export-report" }, "Download report JSON")));
}
