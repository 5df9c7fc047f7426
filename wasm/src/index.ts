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

/** One option a pass declares (docs/passes.md lists them all). */
export interface PassOption {
  name: string;
  type: "bool" | "int" | "string";
  /** The value when the option is not given, as text. */
  default: string;
  help: string;
}

/** A pass or pipeline flag of Shardy's sdy_opt. */
export interface PassInfo {
  /** Flag name without the leading '-', e.g. "sdy-basic-propagate". */
  flag: string;
  /** "import" | "propagation" | "export" | "canonicalize" | "xla". */
  stage: string;
  /** One line. */
  description: string;
  /** Anything else given to the pass is an error. */
  options: PassOption[];
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
  /** Several tables, merged (entries appended), as shardlab-cost --tables. */
  tables?: (PerfTable | string)[];
  /** XLA text-proto tables holding several devices: which one to use. */
  device?: string;
  /** The preset (default h100): its table when none is given (h100, b200:
   *  XLA's measured GEMM rates; others analytical) and its kernel-launch
   *  floor. Named together with a table of another device, the reply warns. */
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
  /** Query by topology (shardlab-cost --group-size/--nodes) instead of
   *  replica groups: nodes > 1 uses the S-curve model alone. */
  group_size?: number;
  nodes?: number;
  gpus_per_node?: number;
  /** S-curve options "nic_speed_gbps=...,gpus_per_node=...". */
  sol_options?: string;
}

export interface GemmOptions extends CostSource {
  b?: number;
  m: number;
  k: number;
  n: number;
  /** Sets lhs, rhs and out dtypes at once (default bf16). */
  dtype?: string;
  /** XLA's key "bf16xbf16->bf16" (lhs, rhs, out), as shardlab-cost --dtypes. */
  dtypes?: string;
  lhs_dtype?: string;
  rhs_dtype?: string;
  out_dtype?: string;
  /** "default": per dtype key; "user": XLA's user-profile path (nearest
   *  neighbour on byte-normalised dims, dtypes mixed). */
  table_kind?: "default" | "user";
  /** A dtype key the table lacks reads its bf16 entries at byte-normalised
   *  dims (XLA's rule); without it such a query is an error naming the
   *  table's dtype keys. */
  dtype_fallback?: boolean;
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
  /** e.g. a table measured on another device than the preset named. */
  warnings?: string[];
}

export interface VersionInfo {
  name: string;
  version: string;
  api_version: number;
}

/** Propagation choices of the playground (see playground_api.h). */
export type PipelineName =
  | "basic"
  | "aggressive"
  | "op-priority"
  | "user-priority"
  | "pipeline"
  | "explicit";

/** Schedule settings: hardware, topology, S-curve, overlap, table. */
export interface ScheduleOptions {
  /** "none": the module already holds explicit collectives. */
  pipeline?: PipelineName | "none";
  preset?: string;
  /** GPUs per NVLink node (0: the preset's). */
  gpus_per_node?: number;
  /** S-curve options "k=v,k2=v2" (nic_speed_gbps, rtt_us, ...). */
  sol_options?: string;
  /** Collectives in flight per stream (default 1). */
  overlap_limit?: number;
  /** Iterations of a while loop whose trip count the module does not say
   * (default: one, with an assumption in the report). */
  while_trip_count?: number;
  /** Per-kind in-flight limits (XLA's *_overlap_limit), at most overlap_limit. */
  all_gather_limit?: number;
  all_reduce_limit?: number;
  reduce_scatter_limit?: number;
  all_to_all_limit?: number;
  collective_permute_limit?: number;
  /** Live-temporary limit in bytes (default: XLA's rule from device memory). */
  memory_limit?: number;
  /** Device memory in bytes for that rule (default: the preset's; 0: none). */
  device_memory?: number;
  /** Reschedules with the limit x 0.9 while the peak exceeds it (default 1). */
  reruns?: number;
  estimator?: "real" | "approximate";
  /** A shardlab table (as `loadTable(...).table` returns it). */
  table?: PerfTable | string;
  /** Also return the Chrome trace. */
  trace?: boolean;
}

export interface ScheduledOp {
  name: string;
  kind: "compute" | "collective";
  stream: string;
  start_us: number;
  end_us: number;
  deps: number[];
  [key: string]: unknown;
}

/** The schedule report (schedule/report.h). */
export interface ScheduleReport {
  step_time_us: number;
  compute_us: number;
  comm_us: number;
  exposed_comm_us: number;
  hidden_comm_us?: number;
  peak_memory_bytes: number;
  memory_curve: [number, number][];
  ops: ScheduledOp[];
  /** mesh, num_devices, device_count_source, input_form ("shardy" or
   * "gspmd"), gpus_per_node, num_nodes. */
  topology: Record<string, unknown>;
  assumptions: string[];
  /** custom_call targets no kernel model knows, with their call counts. */
  not_costed?: Record<string, number>;
  /** Parameters plus peak temporaries of one device against its memory. */
  memory_per_device?: { peak_bytes: number; capacity_bytes: number; fits?: boolean };
  /** Every while loop: its trip count and where it came from. */
  loops?: { name: string; trip_count: number; source: string }[];
  [key: string]: unknown;
}

export interface ChromeTrace {
  traceEvents: Record<string, unknown>[];
  [key: string]: unknown;
}

export interface ScheduleResult {
  ok: boolean;
  error?: string;
  diagnostics?: Diagnostic[];
  explicit_module?: string;
  report?: ScheduleReport;
  trace?: ChromeTrace;
}

export interface PlaygroundOptions extends ScheduleOptions {
  pipeline?: PipelineName;
  /** Estimate the schedule too (default true). */
  schedule?: boolean;
}

/** One playground update: diagnostics, output of the pipeline, schedule. */
export interface PlaygroundResult {
  ok: boolean;
  error?: string;
  stage: "parse" | "verify" | "import" | "propagate" | "schedule" | "done";
  pipeline?: string;
  flags?: string[];
  /** "gspmd" when the input held GSPMD mhlo.sharding strings (imported
   * into meshes and sdy.sharding before the pipeline), else "shardy". */
  input_form?: "shardy" | "gspmd";
  diagnostics: Diagnostic[];
  /** The input as printed (canonical form), "" when it did not parse. */
  input: string;
  /** The module after the pipeline. */
  output: string;
  schedule?: ScheduleResult;
  timings_ms?: Record<string, number>;
}

/** A 1-based source position in the input text. */
export interface SourcePosition {
  line: number;
  column?: number;
  pipeline?: PipelineName;
}

export interface FactorInfo {
  index: number;
  symbol: string;
  size: number;
  kind: "pass-through" | "reduction" | "need-replication" | "permutation" | "blocked";
}

export interface FactorRowState {
  factors: { axes: string[]; present: boolean; closed: boolean; overflow: string[] }[];
  replicated: string[];
  unreduced: string[];
  sharding: string;
}

export interface FactorTable {
  ok: boolean;
  error?: string;
  op?: string;
  line?: number;
  column?: number;
  mesh?: string;
  factors?: FactorInfo[];
  rows?: { tensor: string; dims: number[][]; before: FactorRowState; after: FactorRowState }[];
}

export interface DeviceShard {
  id: number;
  coords: number[];
  shard: number[];
  offsets: number[];
  sizes: number[];
}

export interface ValueLayout {
  ok: boolean;
  error?: string;
  value?: { line: number; column: number; kind: "argument" | "result"; index: number };
  op?: string;
  sharding?: string;
  shape?: number[];
  local_shape?: number[];
  mesh?: { name: string; axes: { name: string; size: number }[]; device_ids: number[]; text: string };
  dims?: { axes: string[]; shards: number; closed: boolean }[];
  replicated?: string[];
  unreduced?: string[];
  devices?: DeviceShard[];
}

export interface TraceDecision {
  target: string;
  source: string;
  factor: number;
  symbol: string;
  axis: string;
  priority: number;
}

export interface TraceStep {
  /** Shardy's step-N. */
  index: number;
  /** "op", "data_flow_edge", "func_result", ... */
  kind: string;
  op: string;
  line: number;
  column: number;
  strategy: string;
  /** User-priority round (-1 outside that layer). */
  user_priority: number;
  /** Op-priority level 0..4 (-1 when not run). */
  op_priority_level: number;
  /** The step's operands and results, by printed name. */
  operands: string[];
  results: string[];
  decisions: TraceDecision[];
  /** Sharding-group members that received the new sharding. */
  group_copies: number;
}

export interface PropagationTrace {
  ok: boolean;
  error?: string;
  diagnostics?: Diagnostic[];
  pipeline?: string;
  /** true: the driver's own decisions, in order. */
  exact?: boolean;
  order?: string;
  seeds?: { slot: { func: string; value?: string; result?: number }; axis: string; origin: string; priority: number }[];
  steps?: TraceStep[];
  values?: unknown[];
}

export interface ShardingReportResult {
  ok: boolean;
  error: string;
  propagation: string;
  propagated_module: string;
  explicit_module: string;
  shardings: { op: string; line: number; result: number; sharding: string }[];
  collectives: {
    kind: string;
    mesh_axes: string[];
    bytes_per_device: number;
    device_groups: number[][];
    required_by: string;
    line: number;
  }[];
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
  /** Verify, propagate with `pipeline`, estimate the schedule: one edit. */
  playground(text: string, options?: PlaygroundOptions): PlaygroundResult;
  /** The estimated schedule (report, optional Chrome trace). */
  schedule(text: string, options?: ScheduleOptions): ScheduleResult;
  /** Propagation, explicit collectives, per-value shardings, collectives. */
  shardingReport(text: string): ShardingReportResult;
  /** The factor table of the op at a position, before and after propagation. */
  opFactors(text: string, position: SourcePosition): FactorTable;
  /** Which shard each device holds of the value at a position. */
  valueLayout(text: string, position: SourcePosition & { before?: boolean }): ValueLayout;
  /** What propagation decided, step by step (the driver's trace). */
  propagationTrace(text: string, options?: { pipeline?: PipelineName }): PropagationTrace;
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
    playground: (t, opts) =>
      call<PlaygroundResult>(
        () => raw.playground(text(t, "text"), options(opts)),
        (f) => ({ ok: false, error: f.error, stage: "parse", diagnostics: [], input: "", output: "" }),
      ),
    schedule: (t, opts) =>
      call<ScheduleResult>(() => raw.schedule(text(t, "text"), options(opts)), (f) => f),
    shardingReport: (t) =>
      call<ShardingReportResult>(
        () => raw.shardingReport(text(t, "text")),
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
      call<FactorTable>(() => raw.opFactors(text(t, "text"), options(position)), (f) => f),
    valueLayout: (t, position) =>
      call<ValueLayout>(() => raw.valueLayout(text(t, "text"), options(position)), (f) => f),
    propagationTrace: (t, opts) =>
      call<PropagationTrace>(
        () => raw.propagationTrace(text(t, "text"), options(opts)),
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
