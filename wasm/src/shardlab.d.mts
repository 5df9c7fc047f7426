// Types of the Emscripten-generated module (dist/shardlab.mjs): an embind
// factory whose functions take strings (module texts also as UTF-8 bytes,
// which cross the boundary faster) and return strings (JSON replies).
// Internal: the public, typed API is index.ts.
export interface RawShardlabModule {
  version(): string;
  listPasses(): string;
  check(text: string | Uint8Array): string;
  run(text: string | Uint8Array, flagsJson: string): string;
  loadTable(text: string | Uint8Array, optionsJson: string): string;
  hardwarePresets(): string;
  estimateCollective(optionsJson: string): string;
  estimateGemm(optionsJson: string): string;
  parseShardings(requestJson: string): string;
  printShardings(requestJson: string): string;
  playground(text: string | Uint8Array, optionsJson: string): string;
  schedule(text: string | Uint8Array, optionsJson: string): string;
  shardingReport(text: string | Uint8Array): string;
  opFactors(text: string | Uint8Array, optionsJson: string): string;
  valueLayout(text: string | Uint8Array, optionsJson: string): string;
  propagationTrace(text: string | Uint8Array, optionsJson: string): string;
  HEAP8: Int8Array;
}

declare function createShardlabModule(
  options?: Record<string, unknown>
): Promise<RawShardlabModule>;
export default createShardlabModule;
