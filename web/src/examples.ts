// The examples menu: every .mlir module under examples/ (bundled as text at
// build time), hello.mlir first.
const modules = import.meta.glob("../../examples/**/*.mlir", { query: "?raw", import: "default", eager: true }) as Record<string, string>;

export interface Example {
  name: string;
  text: string;
}

export const EXAMPLES: Example[] = Object.entries(modules)
  .map(([path, text]) => ({ name: path.replace(/^.*examples\//, "").replace(/\.mlir$/, ""), text }))
  .sort((a, b) => (a.name === "hello" ? -1 : b.name === "hello" ? 1 : a.name.localeCompare(b.name)));
