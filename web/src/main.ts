// The playground page: wires the editor, the worker running the WASM core,
// the URL/local-storage state and the views. After each edit (at once when
// the core is fast, after a pause in the typing when it is not) one
// `playground` call verifies, propagates and schedules; the views of the
// selection (factor table, devices, trace) are fetched when shown.
import "./style.css";
import { CoreClient } from "./client";
import { ComparePool, poolSize } from "./pool";
import { createInputEditor, createOutputView, diagnosticText, offsetOf } from "./editor";
import { EXAMPLES } from "./examples";
import { DEFAULT_SETTINGS, decodeHash, encodeHash, loadLocal, saveLocal, type AppState, type Settings } from "./state";
import { setupTabs } from "./tabs";
import { h } from "./dom";
import { renderShardingEditor, type Edit, type SyntaxCore } from "./views/sharding-editor";
import { renderFactors } from "./views/factors";
import { renderTrace } from "./views/trace";
import { renderDevices } from "./views/devices";
import { deviceValuesSection, SHOWN_ELEMENTS, type DeviceValues } from "./views/device-values";
import { renderSchedule, type TableState } from "./views/schedule";
import { renderCompare, type CompareState } from "./views/compare";
import { renderGraph } from "./views/graph";
import type {
  FactorTable, HardwarePreset, LoadedTable, Failure, ParsedShardings, PerfTable, PlaygroundResult, PrintedShardings,
  PropagationTrace, ScheduleResult, ValueLayout, Comparison, CompareOptions, Suggestions, DataflowGraph, ExecuteResult,
} from "@shardlab/wasm";

const $ = (id: string) => document.getElementById(id) as HTMLElement;

/** What the tests read: update count and the last edit-to-view latency. */
interface Probe {
  updates: number;
  lastLatencyMs: number;
  lastCoreMs: number;
  /** Edit to reply arrival (debounce + worker queue + core + transfer). */
  lastReplyMs: number;
  /** The core's cumulative stage times of the last update (timings_ms). */
  lastTimings: Record<string, number>;
}
declare global {
  interface Window {
    __shardlab: Probe;
  }
}

/** `?example=name` opens that example (used by scripts/run.sh's URL). */
function exampleFromQuery(): AppState | null {
  const name = new URLSearchParams(location.search).get("example");
  const example = EXAMPLES.find((e) => e.name === name);
  return example ? { text: example.text, example: example.name, settings: { ...DEFAULT_SETTINGS } } : null;
}

const initial: AppState = decodeHash(location.hash) as AppState | null
  ?? exampleFromQuery()
  ?? loadLocal()
  ?? { text: EXAMPLES[0]?.text ?? "", example: EXAMPLES[0]?.name ?? "", settings: { ...DEFAULT_SETTINGS } };

const app = {
  text: initial.text,
  example: initial.example,
  settings: { ...DEFAULT_SETTINGS, ...initial.settings } as Settings,
  cursor: { line: 1, column: 1 },
  tab: "tab-output",
  result: null as PlaygroundResult | null,
  table: null as { table: PerfTable; status: TableState } | null,
  tableStatus: null as TableState | null,
  presets: [] as HardwarePreset[],
  trace: null as PropagationTrace | null,
  traceIndex: 0,
  devicesBefore: false,
  /** The Devices view's run on simulated devices, and the text it ran. */
  values: { result: null, running: false, stale: false, ms: 0 } as DeviceValues,
  valuesText: "",
  editAt: performance.now(),
  compare: { devices: 0, comparison: null, comparing: false, compareMs: 0, workers: 1, suggestions: null, suggesting: false } as CompareState,
  /** What the shown comparison was computed from. */
  compared: null as InputKey | null,
  graph: null as DataflowGraph | null,
  /** What the shown graph was computed from. */
  graphed: null as InputKey | null,
};

/**
 * What a view's reply was computed from, checked on every cursor move: the
 * text (the same string until an edit, so comparing it costs nothing), the
 * loaded table by identity, and the remaining options (small) as JSON.
 */
interface InputKey {
  text: string;
  table: unknown;
  rest: string;
}

function inputKey(options: Record<string, unknown>): InputKey {
  const { table, ...rest } = options;
  return { text: app.text, table, rest: JSON.stringify(rest) };
}

function sameInput(a: InputKey | null, b: InputKey): boolean {
  return a !== null && a.text === b.text && a.table === b.table && a.rest === b.rest;
}

window.__shardlab = { updates: 0, lastLatencyMs: 0, lastCoreMs: 0, lastReplyMs: 0, lastTimings: {} };
const core = new CoreClient();
const comparePool = new ComparePool(core, poolSize());

// ---- Theme
const storedTheme = localStorage.getItem("shardlab-theme");
let dark = storedTheme ? storedTheme === "dark" : matchMedia("(prefers-color-scheme: dark)").matches;
document.documentElement.dataset.theme = dark ? "dark" : "light";

// ---- Editors
const editor = createInputEditor($("editor"), app.text, dark, (text) => {
  app.text = text;
  app.editAt = performance.now();
  scheduleUpdate();
}, (line, column) => {
  if (line === app.cursor.line && column === app.cursor.column) return;
  app.cursor = { line, column };
  scheduleSelection();
});
const output = createOutputView($("output"), dark);

$("theme").addEventListener("click", () => {
  dark = !dark;
  localStorage.setItem("shardlab-theme", dark ? "dark" : "light");
  document.documentElement.dataset.theme = dark ? "dark" : "light";
  editor.setTheme(dark);
  output.setTheme(dark);
});

// ---- Examples and pipeline
const examples = $("examples") as HTMLSelectElement;
examples.append(h("option", { value: "" }, "(your module)"), ...EXAMPLES.map((e) => h("option", { value: e.name }, e.name)));
examples.value = EXAMPLES.some((e) => e.name === app.example) ? app.example : "";
examples.addEventListener("change", () => {
  const example = EXAMPLES.find((e) => e.name === examples.value);
  if (!example) return;
  app.example = example.name;
  editor.setText(example.text);
});
const pipeline = $("pipeline") as HTMLSelectElement;
pipeline.value = app.settings.pipeline;
pipeline.addEventListener("change", () => {
  app.settings.pipeline = pipeline.value;
  app.editAt = performance.now();
  void update();
});

// ---- Share link and persistence
function persist(): void {
  const state: AppState = { text: app.text, example: app.example, settings: app.settings };
  saveLocal(state);
  history.replaceState(null, "", encodeHash(state));
}
let persistTimer = 0;
function schedulePersist(): void {
  clearTimeout(persistTimer);
  // Compressing a large module into the URL takes ~100 ms (2k ops): wait
  // for a pause in the editing, then for an idle moment, so it does not
  // hold up the next update.
  const pause = app.text.length > 20_000 ? 2000 : 300;
  persistTimer = window.setTimeout(() => requestIdleCallback(persist, { timeout: 2000 }), pause);
}
$("share").addEventListener("click", async () => {
  persist();
  try {
    await navigator.clipboard.writeText(location.href);
    $("status").textContent = "share link copied";
  } catch {
    $("status").textContent = "share link is in the address bar";
  }
});

// ---- Updates
let updateTimer = 0;
let updateQueued = false;
/** The core's time for the last update; below this an edit is sent at once. */
const IMMEDIATE_BELOW_MS = 50;
function scheduleUpdate(): void {
  clearTimeout(updateTimer);
  // A fast core answers each keystroke (the update channel keeps one call in
  // flight and sends only the newest waiting one); a slow one waits for a
  // pause in the typing first.
  if (window.__shardlab.lastCoreMs >= IMMEDIATE_BELOW_MS) {
    updateTimer = window.setTimeout(() => void update(), 25);
    return;
  }
  // Sent when the edit's event handling ends (a microtask), so the worker
  // computes while this thread draws the keystroke; a timeout would run
  // after that frame (10 ms on the largest example, in the browser test's
  // trace). Several changes in one task still make one call.
  if (updateQueued) return;
  updateQueued = true;
  queueMicrotask(() => {
    updateQueued = false;
    void update();
  });
}

function scheduleOptions(): Record<string, unknown> {
  const { pipeline: p, fold_loops: _display, ...rest } = app.settings;
  return { pipeline: p, ...rest, ...(app.table ? { table: app.table.table } : {}) };
}

/**
 * The schedule is estimated only while its view is open (it is the costly
 * part); the input is not sent back (the core marks what changed).
 */
function updateOptions(): Record<string, unknown> {
  return { ...scheduleOptions(), schedule: app.tab === "tab-schedule", input: false };
}

async function update(): Promise<void> {
  const text = app.text;
  const reply = await core.latest<PlaygroundResult | Failure>("update", "playground", text, updateOptions());
  if (reply.stale) return;
  const replyAt = performance.now();
  if (!("stage" in reply.result)) {
    // Only options the page builds reach the core: this is a bug, say so.
    $("status").textContent = `update failed: ${reply.result.error}`;
    $("status").className = "status error";
    return;
  }
  const r = reply.result;
  app.result = r;
  editor.setDiagnostics(r.diagnostics);
  renderProblems(r);
  if (r.ok) showOutput(r);
  // A failed update keeps the last good output, marked as stale.
  $("view-output").classList.toggle("stale", !r.ok);
  const imported = r.input_form === "gspmd" ? "from GSPMD: " : "";
  const status = r.ok ? `${imported}propagated (${r.pipeline}) in ${reply.ms.toFixed(0)} ms` : `${r.stage} failed: ${r.error ?? `${r.diagnostics.length} diagnostic(s)`}`;
  $("status").textContent = status;
  $("status").className = r.ok ? "status ok" : "status error";
  schedulePersist();
  app.trace = null;
  renderActive();
  refreshSelection();
  requestAnimationFrame(() => {
    window.__shardlab.updates++;
    window.__shardlab.lastLatencyMs = performance.now() - app.editAt;
    window.__shardlab.lastCoreMs = reply.ms;
    window.__shardlab.lastReplyMs = replyAt - app.editAt;
    window.__shardlab.lastTimings = r.timings_ms ?? {};
    document.body.dataset.updates = String(window.__shardlab.updates);
  });
}

function renderProblems(r: PlaygroundResult): void {
  const problems = $("problems");
  const items = r.diagnostics.map((d) =>
    h("li", { class: d.severity },
      h("button", { type: "button", class: "link", onclick: () => jumpTo(d.range.start.line, d.range.start.column) },
        `${d.range.start.line}:${d.range.start.column}`),
      ` ${d.severity}: ${diagnosticText(d)}`));
  if (!r.ok && r.error && !r.diagnostics.length) items.push(h("li", { class: "error" }, r.error));
  problems.replaceChildren(...items);
}

function showOutput(r: PlaygroundResult): void {
  const spans = r.changes ?? [];
  const lines = r.output.split("\n");
  let offset = 0;
  const starts = lines.map((l) => { const s0 = offset; offset += l.length + 1; return s0; });
  output.show(r.output,
    spans.map((c) => ({ from: starts[c.line - 1] + c.from, to: starts[c.line - 1] + c.to })),
    spans.map((c) => c.line));
  $("view-output").dataset.changed = String(spans.length);
}

function jumpTo(line: number, column = 1): void {
  const pos = offsetOf(editor.view.state, line, column);
  editor.view.dispatch({ selection: { anchor: pos }, scrollIntoView: true });
  editor.view.focus();
}

// ---- Views
let selectionTimer = 0;
function scheduleSelection(): void {
  clearTimeout(selectionTimer);
  selectionTimer = window.setTimeout(() => { renderActive(); refreshSelection(); }, 60);
}

/** The core's sharding parser and printer for the structured editor. */
const syntaxCore: SyntaxCore = {
  parse: async (shardings, meshes) => {
    const r = await core.latest<ParsedShardings | Failure>("sharding-syntax", "parseShardings", { shardings, meshes });
    return r.stale ? null : r.result;
  },
  print: async (request) => (await core.call<PrintedShardings | Failure>("printShardings", request)).result,
};

function applyEdit(e: Edit): void {
  app.editAt = performance.now();
  editor.view.dispatch({ changes: e });
}

function renderActive(): void {
  if (app.tab === "tab-sharding")
    void renderShardingEditor($("view-sharding"), app.text, app.cursor.line, app.cursor.column, applyEdit, syntaxCore);
  if (app.tab === "tab-schedule") renderScheduleView();
  if (app.tab === "tab-compare") void refreshCompare();
  if (app.tab === "tab-graph") void refreshGraph();
}

// ---- Graph
/** The graph shows collectives: the explicit pipeline unless the per-device one is chosen. */
function graphPipeline(): string {
  return app.settings.pipeline === "partition" ? "partition" : "explicit";
}

function drawGraph(): void {
  renderGraph($("view-graph"), app.graph, app.cursor.line, (line) => jumpTo(line));
}

async function refreshGraph(): Promise<void> {
  const options = { pipeline: graphPipeline() };
  const key = inputKey(options);
  if (!sameInput(app.graphed, key)) {
    const r = await core.latest<DataflowGraph>("graph", "dataflowGraph", key.text, options);
    if (r.stale) return;
    app.graph = r.result;
    app.graphed = key;
    document.body.dataset.graphs = String(Number(document.body.dataset.graphs ?? 0) + 1);
  }
  drawGraph();
}

// ---- Compare
/** compareStrategies' options: the schedule settings, the devices, the SVG. */
function compareOptions(): Record<string, unknown> {
  const { pipeline: _pipeline, ...settings } = scheduleOptions();
  return { ...settings, ...(app.compare.devices ? { devices: app.compare.devices } : {}), svg: true };
}

function drawCompare(): void {
  renderCompare($("view-compare"), app.compare, {
    onDevices: (devices) => { app.compare.devices = devices; app.compare.suggestions = null; void refreshCompare(); },
    onSuggest: () => void suggest(),
  });
}

/** Compares the current text's strategies unless the shown ones are of it. */
async function refreshCompare(): Promise<void> {
  const options = compareOptions();
  const key = inputKey(options);
  if (sameInput(app.compared, key)) return; // the view already shows it
  app.compare.comparing = true;
  drawCompare();
  const r = await core.latestOf("compare", () => comparePool.compare(key.text, options as CompareOptions));
  if (r.stale) return;
  app.compare.suggestions = null;
  app.compared = key;
  app.compare = { ...app.compare, comparison: r.result, comparing: false, compareMs: r.ms, workers: comparePool.size };
  drawCompare();
  document.body.dataset.compared = String(Number(document.body.dataset.compared ?? 0) + 1);
}

async function suggest(): Promise<void> {
  app.compare.suggesting = true;
  drawCompare();
  const { svg: _svg, ...options } = compareOptions();
  const r = await core.latest<Suggestions>("suggest", "suggestShardings", app.text, { ...options, budget_ms: 2000 });
  app.compare.suggesting = false;
  if (!r.stale) app.compare.suggestions = r.result;
  drawCompare();
}

function renderScheduleView(): void {
  renderSchedule($("view-schedule"), app.result?.schedule as ScheduleResult | undefined, app.settings, app.presets, app.tableStatus, {
    onSettings: (patch) => { Object.assign(app.settings, patch); app.editAt = performance.now(); void update(); },
    onTableFile: (file) => void loadTableFile(file),
    onClearTable: () => { app.table = null; app.tableStatus = null; void update(); },
    onExportTrace: () => void exportTrace(),
    onExportReport: () => download("shardlab-report.json", JSON.stringify(app.result?.schedule?.report ?? {}, null, 1)),
  }, app.cursor.line);
}

async function refreshSelection(): Promise<void> {
  const position = { line: app.cursor.line, column: app.cursor.column, pipeline: app.settings.pipeline };
  const text = app.text;
  if (app.tab === "tab-factors") {
    const r = await core.latest<FactorTable>("factors", "opFactors", text, position);
    if (!r.stale) renderFactors($("view-factors"), r.result, position.line);
  } else if (app.tab === "tab-devices") {
    const r = await core.latest<ValueLayout>("devices", "valueLayout", text, { ...position, before: app.devicesBefore });
    if (!r.stale) {
      app.values.stale = app.values.result !== null && app.valuesText !== app.text;
      const values = deviceValuesSection(app.values, app.cursor.line, () => void runOnDevices(), (line) => jumpTo(line));
      renderDevices($("view-devices"), r.result, app.devicesBefore, (b) => { app.devicesBefore = b; void refreshSelection(); }, values);
    }
  } else if (app.tab === "tab-trace") {
    if (!app.trace) {
      const r = await core.latest<PropagationTrace>("trace", "propagationTrace", text, { pipeline: app.settings.pipeline });
      if (r.stale) return;
      app.trace = r.result;
      const steps = app.trace.steps ?? [];
      const here = steps.findIndex((s) => s.line === app.cursor.line);
      if (here >= 0) app.traceIndex = here;
    }
    drawTrace();
  }
}

/** The Devices view's button: partition by the module's shardings and run. */
async function runOnDevices(): Promise<void> {
  app.values.running = true;
  void refreshSelection();
  const text = app.text;
  const r = await core.call<ExecuteResult>("execute", text,
    { shardings: "module", collectives: true, max_elements: SHOWN_ELEMENTS, max_collectives: 32 });
  app.values = { result: r.result, running: false, stale: false, ms: r.ms };
  app.valuesText = text;
  void refreshSelection();
}

function drawTrace(): void {
  renderTrace($("view-trace"), app.trace, app.traceIndex, (i) => {
    app.traceIndex = Math.min(Math.max(i, 0), (app.trace?.steps?.length ?? 1) - 1);
    drawTrace();
    (document.querySelector("[data-testid=trace-slider]") as HTMLElement | null)?.focus();
  }, (line) => jumpTo(line));
}

setupTabs($("tabs"), (id) => {
  app.tab = id;
  renderActive();
  void refreshSelection();
  if (id === "tab-schedule" && app.result?.ok && !app.result.schedule) void update();
});

// ---- Tables and exports
async function loadTableFile(file: File): Promise<void> {
  const text = await file.text();
  const r = await core.call<LoadedTable | Failure>("loadTable", text, { format: "auto" });
  if (r.result.ok) {
    const t = r.result as LoadedTable;
    const summary = `${t.format} table, ${t.summary.collectives} collective and ${t.summary.gemms} GEMM entries (${t.summary.device_name || "device"})`;
    app.tableStatus = { name: file.name, summary };
    app.table = { table: t.table, status: app.tableStatus };
    app.editAt = performance.now();
    await update();
  } else {
    const lines = (r.result as Failure).error.split("\n");
    const more = lines.length > 4 ? `\n… and ${lines.length - 4} more line(s)` : "";
    app.tableStatus = { name: file.name, error: lines.slice(0, 4).join("\n") + more };
    renderActive();
  }
}

function download(name: string, text: string): void {
  const url = URL.createObjectURL(new Blob([text], { type: "application/json" }));
  const a = h("a", { href: url, download: name });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

async function exportTrace(): Promise<void> {
  const r = await core.call<ScheduleResult>("schedule", app.text, { ...scheduleOptions(), trace: true });
  if (r.result.ok && r.result.trace) download("shardlab-trace.json", JSON.stringify(r.result.trace));
  else $("status").textContent = `trace export failed: ${r.result.error ?? "no schedule"}`;
}

// ---- Start
void (async () => {
  const presets = await core.call<HardwarePreset[]>("hardwarePresets");
  app.presets = presets.result;
  await update();
})();
