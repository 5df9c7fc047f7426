// shardlab's typed JavaScript API over the WebAssembly build. Every method
// takes plain values and returns plain objects; errors (bad module text,
// unknown flags, malformed tables or options, even a trapped instance) come
// back as `{ ok: false, ... }` values and are never thrown. Nothing needs
// freeing: no C++ object crosses the boundary.
//
//   import { load } from "shardlab";
//   const sl = await load();
//   const r = sl.run(text, ["-sdy-basic-propagate"]);
//   if (!r.ok) console.log(r.diagnostics);
import createShardlabModule, { type RawShardlabModule } from "./shardlab.mjs";
import { callWithText } from "./boundary.js";

import type {
  CheckResult,
  Comparison,
  DataflowGraph,
  Suggestions,
  Estimate,
  ExecuteResult,
  Failure,
  FactorTable,
  HardwarePreset,
  LoadedTable,
  ParsedShardings,
  PassInfo,
  PrintedShardings,
  PlaygroundResult,
  PropagationTrace,
  RunResult,
  ScheduleResult,
  ShardingReportResult,
  ShardlabApi,
  ValueLayout,
  VersionInfo,
} from "./api-types.js";

// Every request and reply type is generated from the JSON Schemas in
// schemas/api/ (scripts/gen-api-types.mjs); this file only binds them.
export type * from "./api-types.js";
export { comparePhased, type CompareCall } from "./compare-phases.js";

/** One instance of the WebAssembly module. */
export type Shardlab = ShardlabApi;

function failure(error: unknown): Failure {
  const message = error instanceof Error ? error.message : String(error);
  return { ok: false, error: `shardlab: ${message}` };
}

/** Calls the raw module and parses its reply; anything thrown is a value. */
function call<T>(body: () => string, onError: (f: Failure) => T): T {
  try {
    return JSON.parse(body()) as T;
  } catch (error) {
    return onError(failure(error));
  }
}

function text(value: unknown, what: string): string {
  if (typeof value !== "string") throw new TypeError(`${what} must be a string`);
  return value;
}

function options(value: unknown): string {
  if (value === undefined) return "{}";
  if (value === null || typeof value !== "object" || Array.isArray(value))
    throw new TypeError("options must be an object");
  return JSON.stringify(value);
}

function flagList(flags: unknown): string {
  if (flags === undefined) return "[]";
  if (!Array.isArray(flags) || !flags.every((f) => typeof f === "string"))
    throw new TypeError("flags must be an array of strings");
  return JSON.stringify(flags);
}

function wrap(raw: RawShardlabModule): Shardlab {
  const runFailure = (f: Failure): RunResult => ({
    ok: false,
    output: "",
    stderr: "",
    diagnostics: [],
    error: f.error,
  });
  return {
    version: () =>
      call<VersionInfo>(
        () => raw.version(),
        () => ({ ok: false, name: "shardlab", version: "", api_version: 0 }),
      ),
    passes: () =>
      call<{ passes: PassInfo[] }>(() => raw.listPasses(), () => ({ passes: [] })).passes,
    check: (t) =>
      call<CheckResult>(
        () => callWithText(raw, "check", text(t, "text")),
        (f) => ({ ok: false, output: "", diagnostics: [], error: f.error }),
      ),
    run: (t, flags) =>
      call<RunResult>(() => callWithText(raw, "run", text(t, "text"), flagList(flags)), runFailure),
    execute: (t, opts) =>
      call<ExecuteResult>(() => callWithText(raw, "execute", text(t, "text"), options(opts)), (f) => f),
    loadTable: (t, opts) =>
      call<LoadedTable | Failure>(
        () => callWithText(raw, "loadTable", text(t, "table text"), options(opts)),
        (f) => f,
      ),
    hardwarePresets: () =>
      call<{ presets: HardwarePreset[] }>(
        () => raw.hardwarePresets(),
        () => ({ presets: [] }),
      ).presets,
    estimateCollective: (opts) =>
      call<Estimate | Failure>(() => raw.estimateCollective(options(opts)), (f) => f),
    estimateGemm: (opts) =>
      call<Estimate | Failure>(() => raw.estimateGemm(options(opts)), (f) => f),
    parseShardings: (request) =>
      call<ParsedShardings | Failure>(() => raw.parseShardings(options(request)), (f) => f),
    printShardings: (request) =>
      call<PrintedShardings | Failure>(() => raw.printShardings(options(request)), (f) => f),
    playground: (t, opts) =>
      call<PlaygroundResult | Failure>(
        () => callWithText(raw, "playground", text(t, "text"), options(opts)),
        (f) => f,
      ),
    schedule: (t, opts) =>
      call<ScheduleResult>(() => callWithText(raw, "schedule", text(t, "text"), options(opts)), (f) => f),
    shardingReport: (t) =>
      call<ShardingReportResult>(
        () => callWithText(raw, "shardingReport", text(t, "text")),
        (f) => ({
          ok: false,
          error: f.error,
          propagation: "",
          propagated_module: "",
          explicit_module: "",
          shardings: [],
          collectives: [],
        }),
      ),
    opFactors: (t, position) =>
      call<FactorTable>(() => callWithText(raw, "opFactors", text(t, "text"), options(position)), (f) => f),
    valueLayout: (t, position) =>
      call<ValueLayout>(() => callWithText(raw, "valueLayout", text(t, "text"), options(position)), (f) => f),
    propagationTrace: (t, opts) =>
      call<PropagationTrace>(
        () => callWithText(raw, "propagationTrace", text(t, "text"), options(opts)),
        (f) => f,
      ),
    dataflowGraph: (t, opts) =>
      call<DataflowGraph>(
        () => callWithText(raw, "dataflowGraph", text(t, "text"), options(opts)),
        (f) => f,
      ),
    compareStrategies: (t, opts) =>
      call<Comparison>(
        () => callWithText(raw, "compareStrategies", text(t, "text"), options(opts)),
        (f) => f,
      ),
    suggestShardings: (t, opts) =>
      call<Suggestions>(
        () => callWithText(raw, "suggestShardings", text(t, "text"), options(opts)),
        (f) => f,
      ),
    memoryBytes: () => raw.HEAP8.length,
  };
}

/** Instantiates the WebAssembly module (the .wasm is inlined in the package). */
export async function load(): Promise<Shardlab> {
  return wrap(await createShardlabModule());
}

export default load;
