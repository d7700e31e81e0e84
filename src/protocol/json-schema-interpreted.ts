import { Validator } from "@cfworker/json-schema";
import { isObject, type JsonObject } from "./messages.js";

// The half of JSON Schema support that needs no code generation, apart from ajv so that what
// imports only this (the client, which never compiles a server's schema to code) does not load
// ajv, the largest dependency the package has.

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

/** The schema's dialect, from `$schema`; throws on one we do not support. */
export function dialectOf(schema: JsonObject): "2020-12" | "7" {
  const dialect = schema.$schema;
  if (dialect === undefined || dialect === DRAFT_2020) return "2020-12";
  if (typeof dialect === "string" && DRAFT_07.has(dialect)) return "7";
  throw new TypeError(`Unsupported JSON Schema dialect: ${String(dialect)}`);
}

/** Throws on a schema too deep, too large, or with a network `$ref`. */
export function checkBounds(schema: JsonObject): void {
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

/**
 * Prepares a plain JSON Schema (2020-12 or draft-07) to be walked for each value, never compiled
 * to code: for runtimes that forbid code generation and for schemas that come from someone else.
 * Throws as {@link checkBounds} and {@link dialectOf} do.
 */
export function compileInterpretedSchema(schema: JsonObject): CompiledSchema {
  checkBounds(schema);
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
