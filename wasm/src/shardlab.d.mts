// Types of the Emscripten-generated module (dist/shardlab.mjs): an embind
// factory whose functions take and return strings (JSON replies). Internal:
// the public, typed API is index.ts.
export interface RawShardlabModule {
  version(): string;
  listPasses(): string;
  check(text: string): string;
  run(text: string, flagsJson: string): string;
  loadTable(text: string, optionsJson: string): string;
  hardwarePresets(): string;
  estimateCollective(optionsJson: string): string;
  estimateGemm(optionsJson: string): string;
  parseShardings(requestJson: string): string;
  printShardings(requestJson: string): string;
  playground(text: string, optionsJson: string): string;
  schedule(text: string, optionsJson: string): string;
  shardingReport(text: string): string;
  opFactors(text: string, optionsJson: string): string;
  valueLayout(text: string, optionsJson: string): string;
  propagationTrace(text: string, optionsJson: string): string;
  HEAP8: Int8Array;
}

declare function createShardlabModule(
  options?: Record<string, unknown>
): Promise<RawShardlabModule>;
export default createShardlabModule;
