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

/** Severity of a diagnostic, as MLIR names it. */
export type Severity = "error" | "warning" | "note" | "remark";

/** A parse, verify or pass diagnostic. line/column are 1-based, 0 = unknown. */
export interface Diagnostic {
  severity: Severity;
  message: string;
  line: number;
  column: number;
}

/** A failed call: `error` says why (e.g. an unknown flag, bad options). */
export interface Failure {
  ok: false;
  error: string;
}

/** Result of `check` (parse + verify + print). */
export interface CheckResult {
  ok: boolean;
  /** The printed module ("" when it did not parse). */
  output: string;
  diagnostics: Diagnostic[];
  error?: string;
}

/** Result of `run`: what shardlab-opt prints for the same input and flags. */
export interface RunResult {
  ok: boolean;
  /** shardlab-opt's stdout. */
  output: string;
  /** shardlab-opt's stderr (formatted diagnostics). */
  stderr: string;
  diagnostics: Diagnostic[];
  /** Set when the flags themselves were wrong (nothing ran). */
  error?: string;
}

/** A pass or pipeline flag of Shardy's sdy_opt. */
export interface PassInfo {
  /** Flag name without the leading '-', e.g. "sdy-basic-propagate". */
  flag: string;
  description: string;
  /** false: known to Shardy, not implemented in shardlab yet. */
  implemented: boolean;
}

export type TableFormat = "auto" | "shardlab" | "xla-collective" | "xla-gemm";

export interface LoadTableOptions {
  format?: TableFormat;
  /** XLA device key such as "sm_90"; "" selects the only one present. */
  device?: string;
  /** GPUs per NVLink domain for XLA imports (default 8). */
  partition_size?: number;
}

export interface TableSummary {
  source: string;
  device_name: string;
  partition_size: number;
  collectives: number;
  gemms: number;
  collective_ops: string[];
  gemm_dtype_keys: string[];
}

/** A performance table in shardlab's JSON schema (schemas/). */
export type PerfTable = Record<string, unknown> & {
  format: "shardlab-perf-table";
  version: number;
};

export interface LoadedTable {
  ok: true;
  format: Exclude<TableFormat, "auto">;
  summary: TableSummary;
  /** The validated table, normalised to shardlab's JSON schema. */
  table: PerfTable;
  /** Device keys of an XLA text-proto table. */
  devices?: string[];
}

export interface HardwarePreset {
  name: string;
  device_name: string;
  sm_version: string;
  hbm_bytes_per_s: number;
  nvlink_bytes_per_s: number;
  gpus_per_node: number;
  peak_flop_per_s: Record<string, number>;
  source: string;
}

export type CollectiveOpName =
  | "all-reduce"
  | "all-reduce-start"
  | "all-gather"
  | "all-gather-start"
  | "reduce-scatter"
  | "all-to-all"
  | "collective-permute"
  | "collective-permute-start"
  | "send"
  | "recv";

/** Where estimates come from and how they are interpolated. */
export interface CostSource {
  /** A table: a loaded one, its JSON object or text (JSON or XLA txtpb). */
  table?: PerfTable | string;
  /** Without a table: the analytical table of this preset (default h100). */
  hardware?: string;
  /** "compatible" (XLA bit for bit, default) or "accurate". */
  mode?: "compatible" | "accurate";
}

export interface CollectiveOptions extends CostSource {
  op: CollectiveOpName;
  /** XLA's bytes_transferred for the op. */
  bytes: number;
  dtype?: string;
  /** "[2,4]<=[8]", "{{0,1},{2,3}}" or [[0,1],[2,3]]. */
  replica_groups?: string | number[][];
  /** collective-permute: [[source, target], ...]. */
  source_target_pairs?: [number, number][];
  interpolation?: "nearest" | "grid-snap";
  partition_size?: number;
}

export interface GemmOptions extends CostSource {
  b?: number;
  m: number;
  k: number;
  n: number;
  /** Sets lhs, rhs and out dtypes at once (default bf16). */
  dtype?: string;
  lhs_dtype?: string;
  rhs_dtype?: string;
  out_dtype?: string;
  table_kind?: "default" | "user";
}

export interface Explanation {
  key: string;
  neighbours: { point: number[]; value: number; weight: number }[];
  terms: { name: string; value: number; unit: string }[];
  note: string;
}

export interface Estimate {
  ok: true;
  time_us: number;
  /** e.g. "collective-table/exact". */
  model: string;
  explanation: Explanation;
}

export interface VersionInfo {
  name: string;
  version: string;
  api_version: number;
}

/** One instance of the WebAssembly module. */
export interface Shardlab {
  version(): VersionInfo;
  /** Every pass flag shardlab-opt accepts. */
  passes(): PassInfo[];
  /** Parses and verifies; prints the module when it parses. */
  check(text: string): CheckResult;
  /** shardlab-opt over `text` with its arguments, e.g. ["-sdy-propagation-pipeline"]. */
  run(text: string, flags?: string[]): RunResult;
  /** Loads and validates a table (shardlab JSON or XLA text-proto). */
  loadTable(text: string, options?: LoadTableOptions): LoadedTable | Failure;
  hardwarePresets(): HardwarePreset[];
  estimateCollective(options: CollectiveOptions): Estimate | Failure;
  estimateGemm(options: GemmOptions): Estimate | Failure;
  /** Bytes of WebAssembly memory in use by this instance (for monitoring). */
  memoryBytes(): number;
}

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
      call(() => raw.version(), () => ({ name: "shardlab", version: "", api_version: 0 })),
    passes: () =>
      call<{ passes: PassInfo[] }>(() => raw.listPasses(), () => ({ passes: [] })).passes,
    check: (t) =>
      call<CheckResult>(
        () => raw.check(text(t, "text")),
        (f) => ({ ok: false, output: "", diagnostics: [], error: f.error }),
      ),
    run: (t, flags) =>
      call<RunResult>(() => raw.run(text(t, "text"), flagList(flags)), runFailure),
    loadTable: (t, opts) =>
      call<LoadedTable | Failure>(
        () => raw.loadTable(text(t, "table text"), options(opts)),
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
    memoryBytes: () => raw.HEAP8.length,
  };
}

/** Instantiates the WebAssembly module (the .wasm is inlined in the package). */
export async function load(): Promise<Shardlab> {
  return wrap(await createShardlabModule());
}

export default load;
