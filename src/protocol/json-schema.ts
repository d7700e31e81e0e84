import { Validator } from "@cfworker/json-schema";
import { Ajv, type ValidateFunction } from "ajv";
import { Ajv2020 } from "ajv/dist/2020.js";
import { isObject, type JsonObject } from "./messages.js";

/** The outcome of validating a value. */
export type Validation = { ok: true; value: unknown } | { ok: false; message: string };

/** A schema compiled once, then used for every value it checks. */
export interface CompiledSchema {
  /** The JSON Schema advertised to clients. */
  readonly json: JsonObject;
  /** Validates a value; synchronous for JSON Schema, maybe async for Standard Schema. */
  validate(value: unknown): Validation | Promise<Validation>;
}

const DRAFT_2020 = "https://json-schema.org/draft/2020-12/schema";
const DRAFT_07 = new Set([
  "http://json-schema.org/draft-07/schema#",
  "http://json-schema.org/draft-07/schema",
]);
/** Bounds against schemas built to exhaust the validator (spec: basic/index, JSON Schema usage). */
const MAX_SCHEMA_DEPTH = 32;
const MAX_SCHEMA_NODES = 5_000;

let ajv2020: Ajv2020 | undefined;
let ajv07: Ajv | undefined;
let codeGeneration: boolean | undefined;

/**
 * Whether this runtime lets ajv generate code. Edge runtimes (Next.js edge, Workers) forbid
 * `new Function`; there schemas are interpreted by @cfworker/json-schema instead.
 */
export function canGenerateCode(): boolean {
  if (codeGeneration === undefined) {
    try {
      codeGeneration = new Function("return true")() === true;
    } catch {
      codeGeneration = false;
    }
  }
  return codeGeneration;
}

/**
 * Compiles a plain JSON Schema (2020-12 or draft-07) once; throws on schemas too deep, too
 * large, or with a network `$ref`. `interpret` walks the schema instead of generating code,
 * for runtimes that forbid it and for schemas that come from someone else.
 */
export function compileJsonSchema(
  schema: JsonObject,
  interpret = !canGenerateCode(),
): CompiledSchema {
  checkBounds(schema);
  if (interpret) return compileInterpreted(schema);
  const ajv = validatorFor(schema);
  if (typeof schema.$id === "string") ajv.removeSchema(schema.$id);
  const validate = ajv.compile(schema);
  return {
    json: schema,
    validate(value) {
      return validate(value)
        ? { ok: true, value }
        : { ok: false, message: describeAjvErrors(validate) };
    },
  };
}

function dialectOf(schema: JsonObject): "2020-12" | "7" {
  const dialect = schema.$schema;
  if (dialect === undefined || dialect === DRAFT_2020) return "2020-12";
  if (typeof dialect === "string" && DRAFT_07.has(dialect)) return "7";
  throw new TypeError(`Unsupported JSON Schema dialect: ${String(dialect)}`);
}

function validatorFor(schema: JsonObject): Ajv | Ajv2020 {
  // strict: false lets annotations such as x-mcp-header through; no loadSchema, so a $ref to
  // a network URI is never fetched and fails compilation instead.
  if (dialectOf(schema) === "2020-12") {
    ajv2020 ??= new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
    return ajv2020;
  }
  ajv07 ??= new Ajv({ strict: false, allErrors: true, validateFormats: false });
  return ajv07;
}

function checkBounds(schema: JsonObject): void {
  let nodes = 0;
  const base = typeof schema.$id === "string" ? schema.$id : undefined;
  const walk = (value: unknown, depth: number): void => {
    if (depth > MAX_SCHEMA_DEPTH) throw new TypeError("JSON Schema is nested too deeply");
    if (++nodes > MAX_SCHEMA_NODES) throw new TypeError("JSON Schema has too many subschemas");
    const ref = isObject(value) ? value.$ref : undefined;
    // Network references are never dereferenced (spec: basic/index, $ref resolution).
    if (typeof ref === "string" && ref.includes("://") && !(base && ref.startsWith(base))) {
      throw new TypeError(`JSON Schema $ref to a network URI is not resolved: ${ref}`);
    }
    if (Array.isArray(value)) for (const item of value) walk(item, depth + 1);
    else if (isObject(value)) for (const item of Object.values(value)) walk(item, depth + 1);
  };
  walk(schema, 0);
}

function describeAjvErrors(validate: ValidateFunction): string {
  return (validate.errors ?? [])
    .map((error) => `${error.instancePath || "(root)"} ${error.message ?? "is invalid"}`)
    .join("; ");
}

function compileInterpreted(schema: JsonObject): CompiledSchema {
  const validator = new Validator(schema, dialectOf(schema), false);
  return {
    json: schema,
    validate(value) {
      const result = validator.validate(value);
      if (result.valid) return { ok: true, value };
      const message = result.errors
        .filter((error) => error.keyword !== "properties" && error.keyword !== "$ref")
        .map((error) => `${error.instanceLocation.replace(/^#/, "") || "(root)"} ${error.error}`)
        .join("; ");
      return { ok: false, message: message || "is invalid" };
    },
  };
}
