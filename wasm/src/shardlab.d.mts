// Types of the Emscripten-generated module (dist/shardlab.mjs): an embind
// factory. Calls on a module text take the text as (pointer, length) of
// UTF-8 bytes in the instance's memory plus an options JSON string, and
// return the reply JSON as a view of the instance's memory, valid until the
// next call (see boundary.ts); the others take and return strings.
// Internal: the public, typed API is index.ts.
type TextCallFn = (text: number, length: number, optionsJson: string) => Uint8Array;

export interface RawShardlabModule {
  version(): string;
  listPasses(): string;
  hardwarePresets(): string;
  estimateCollective(optionsJson: string): string;
  estimateGemm(optionsJson: string): string;
  parseShardings(requestJson: string): string;
  printShardings(requestJson: string): string;
  check: TextCallFn;
  run: TextCallFn;
  execute: TextCallFn;
  loadTable: TextCallFn;
  playground: TextCallFn;
  schedule: TextCallFn;
  shardingReport: TextCallFn;
  opFactors: TextCallFn;
  valueLayout: TextCallFn;
  propagationTrace: TextCallFn;
  dataflowGraph: TextCallFn;
  compareStrategies: TextCallFn;
  suggestShardings: TextCallFn;
  /** Whether the last text call's reply view holds only ASCII bytes. */
  replyIsAscii(): boolean;
  _malloc(size: number): number;
  _free(pointer: number): void;
  HEAP8: Int8Array;
  HEAPU8: Uint8Array;
}

declare function createShardlabModule(
  options?: Record<string, unknown>
): Promise<RawShardlabModule>;
export default createShardlabModule;
