import { Validator } from "@cfworker/json-schema";
import { Ajv, type ValidateFunction } from "ajv";
import { Ajv2020 } from "ajv/dist/2020.js";
import type { JsonObject } from "../protocol/messages.js";
import { isObject } from "../protocol/messages.js";

/** The Standard Schema v1 surface we use (zod 4, valibot, arktype implement it). */
export interface StandardSchemaV1<Input = unknown, Output = Input> {
  readonly "~standard": {
    readonly version: 1;
    readonly vendor: string;
    readonly validate: (value: unknown) => StandardResult<Output> | Promise<StandardResult<Output>>;
    /** Standard JSON Schema: converts the validator to JSON Schema. */
    readonly jsonSchema?: {
      readonly input: (options: { target: string }) => Record<string, unknown>;
      readonly output: (options: { target: string }) => Record<string, unknown>;
    };
    readonly types?: { readonly input: Input; readonly output: Output };
  };
}

type StandardResult<Output> =
  | { readonly value: Output; readonly issues?: undefined }
  | {
      readonly issues: ReadonlyArray<{
        readonly message: string;
        readonly path?: ReadonlyArray<PropertyKey | { readonly key: PropertyKey }>;
      }>;
    };

/** A schema a tool may declare: plain JSON Schema or a Standard Schema validator. */
export type SchemaInput = JsonObject | StandardSchemaV1;

/** The outcome of validating a value. */
export type Validation = { ok: true; value: unknown } | { ok: false; message: string };

/** A schema compiled once at registration. */
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
function canGenerateCode(): boolean {
  if (codeGeneration === undefined) {
    try {
      codeGeneration = new Function("return true")() === true;
    } catch {
      codeGeneration = false;
    }
  }
  return codeGeneration;
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

/** True when `value` implements Standard Schema. */
export function isStandardSchema(value: unknown): value is StandardSchemaV1 {
  return isObject(value) && isObject((value as Record<string, unknown>)["~standard"]);
}

function describeAjvErrors(validate: ValidateFunction): string {
  return (validate.errors ?? [])
    .map((error) => `${error.instancePath || "(root)"} ${error.message ?? "is invalid"}`)
    .join("; ");
}

/** Compiles a JSON Schema or Standard Schema once; throws on schemas we refuse to serve. */
export function compileSchema(
  input: SchemaInput,
  role: "input" | "output",
  interpret = !canGenerateCode(),
): CompiledSchema {
  if (isStandardSchema(input)) return compileStandard(input, role);
  checkBounds(input);
  if (interpret) return compileInterpreted(input);
  const ajv = validatorFor(input);
  if (typeof input.$id === "string") ajv.removeSchema(input.$id);
  const validate = ajv.compile(input);
  return {
    json: input,
    validate(value) {
      return validate(value)
        ? { ok: true, value }
        : { ok: false, message: describeAjvErrors(validate) };
    },
  };
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

function compileStandard(schema: StandardSchemaV1, role: "input" | "output"): CompiledSchema {
  const converter = schema["~standard"].jsonSchema;
  if (!converter) {
    throw new TypeError(
      "A Standard Schema validator needs Standard JSON Schema support (jsonSchema.input) to be advertised",
    );
  }
  const raw = converter[role]({ target: "draft-2020-12" });
  const json = simplifyNullable(raw) as JsonObject;
  return {
    json,
    async validate(value) {
      const result = await schema["~standard"].validate(value);
      if (!result.issues) return { ok: true, value: result.value };
      const message = result.issues
        .map((issue) => {
          const path = (issue.path ?? [])
            .map((part) => String(typeof part === "object" ? part.key : part))
            .join(".");
          return path ? `${path}: ${issue.message}` : issue.message;
        })
        .join("; ");
      return { ok: false, message };
    },
  };
}

/**
 * Rewrites `anyOf: [T, {type: "null"}]` and `type: [T, "null"]` (what converters emit for
 * nullable fields) to `T` with `default: null`: several clients reject those forms.
 */
export function simplifyNullable(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(simplifyNullable);
  if (!isObject(schema)) return schema;
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(schema)) out[key] = simplifyNullable(value);
  const type = out.type;
  if (Array.isArray(type) && type.length === 2 && type.includes("null")) {
    return { ...out, type: type.find((t) => t !== "null"), default: out.default ?? null };
  }
  const anyOf = out.anyOf;
  if (Array.isArray(anyOf) && anyOf.length === 2) {
    const nullIndex = anyOf.findIndex(
      (branch) => isObject(branch) && branch.type === "null" && Object.keys(branch).length === 1,
    );
    const other = anyOf[1 - nullIndex];
    if (nullIndex !== -1 && isObject(other)) {
      const { anyOf: _drop, ...rest } = out;
      return { ...other, ...rest, default: rest.default ?? null };
    }
  }
  return out;
}
