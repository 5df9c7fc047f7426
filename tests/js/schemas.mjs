// The JSON Schemas of the API (schemas/api/), compiled with Ajv: every
// method's reply schema, and `validating(instance)`, which wraps an instance
// so that every reply it gives is checked against its schema (a mismatch
// throws, naming the method and the first errors). helpers.mjs hands the
// tests only validating instances, so every reply any JS test sees is
// checked.
import { createRequire } from "node:module";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const require = createRequire(path.join(ROOT, "wasm", "package.json"));
const Ajv2020 = require("ajv/dist/2020").default;

const SCHEMAS = path.join(ROOT, "schemas");

function readSchema(file) {
  return JSON.parse(fs.readFileSync(file, "utf8"));
}

/** The reply schema of `method`, with its refs made absolute. */
function absolute(node, base) {
  if (Array.isArray(node)) return node.map((n) => absolute(n, base));
  if (node === null || typeof node !== "object") return node;
  const out = {};
  for (const [key, value] of Object.entries(node))
    out[key] = key === "$ref" ? new URL(value, base).href : absolute(value, base);
  return out;
}

function build() {
  const ajv = new Ajv2020({ allErrors: true, strict: true, strictRequired: false, allowUnionTypes: true });
  ajv.addKeyword({ keyword: "x-methods" });
  ajv.addSchema(readSchema(path.join(SCHEMAS, "perf_table.schema.json")));
  const methods = new Map();
  for (const name of fs.readdirSync(path.join(SCHEMAS, "api")).sort()) {
    if (!name.endsWith(".schema.json")) continue;
    const schema = readSchema(path.join(SCHEMAS, "api", name));
    ajv.addSchema(schema);
    for (const method of schema["x-methods"] ?? [])
      methods.set(method.name, absolute(method.reply, schema.$id));
  }
  const validators = new Map();
  for (const [name, reply] of methods) validators.set(name, ajv.compile(reply));
  return validators;
}

/** Method name -> Ajv validate function of its reply. */
export const replyValidators = build();

/** Throws unless `reply` is what `method`'s schema says it replies. */
export function checkReply(method, reply) {
  const validate = replyValidators.get(method);
  if (!validate) throw new Error(`no schema declares method ${method} (schemas/api x-methods)`);
  if (validate(reply)) return reply;
  // In a union (reply | Failure) the branch that nearly matched fails
  // deeper: show those errors first.
  const depth = (e) => e.instancePath.split("/").length;
  const errors = [...validate.errors]
    .sort((a, b) => depth(b) - depth(a))
    .slice(0, 5)
    .map((e) => `${e.instancePath || "/"} ${e.message}${e.params ? " " + JSON.stringify(e.params) : ""}`)
    .join("\n  ");
  throw new Error(`reply of ${method} does not match its schema:\n  ${errors}`);
}

/** `instance` with every method's reply checked against its schema. */
export function validating(instance) {
  return new Proxy(instance, {
    get(target, key) {
      const value = target[key];
      if (typeof value !== "function" || typeof key !== "string") return value;
      return (...args) => checkReply(key, value.apply(target, args));
    },
  });
}
