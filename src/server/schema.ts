import {
  type CompiledSchema,
  compileJsonSchema,
  type Validation,
} from "../protocol/json-schema.js";
import type { JsonObject } from "../protocol/messages.js";
import { isObject } from "../protocol/messages.js";
import { isThenable } from "../utils/thenable.js";

export type { CompiledSchema, Validation } from "../protocol/json-schema.js";

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

/** True when `value` implements Standard Schema. */
export function isStandardSchema(value: unknown): value is StandardSchemaV1 {
  return isObject(value) && isObject((value as Record<string, unknown>)["~standard"]);
}

/** Compiles a JSON Schema or Standard Schema once; throws on schemas we refuse to serve. */
export function compileSchema(
  input: SchemaInput,
  role: "input" | "output",
  interpret?: boolean,
): CompiledSchema {
  if (isStandardSchema(input)) return compileStandard(input, role);
  return compileJsonSchema(input, interpret);
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
    // Most validators (Zod, Valibot, ArkType) answer at once: a promise only when theirs is one.
    validate(value) {
      const result = schema["~standard"].validate(value);
      return isThenable(result) ? Promise.resolve(result).then(toValidation) : toValidation(result);
    },
  };
}

function toValidation(result: StandardResult<unknown>): Validation {
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
