import { Ajv, type ValidateFunction } from "ajv";
import { Ajv2020 } from "ajv/dist/2020.js";
import {
  type CompiledSchema,
  checkBounds,
  compileInterpretedSchema,
  dialectOf,
} from "./json-schema-interpreted.js";
import { isPlainSchema } from "./json-schema-plain.js";
import type { JsonObject } from "./messages.js";

export type { CompiledSchema, Validation } from "./json-schema-interpreted.js";

/** One ajv per dialect, and per whether it checks schemas against the meta-schema first. */
const validators = new Map<string, Ajv | Ajv2020>();
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
  if (interpret) return compileInterpretedSchema(schema);
  checkBounds(schema);
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

function validatorFor(schema: JsonObject): Ajv | Ajv2020 {
  const dialect = dialectOf(schema);
  // A plain schema cannot fail the meta-schema, whose compilation a cold start would pay for.
  const validateSchema = !isPlainSchema(schema);
  const key = `${dialect} ${validateSchema}`;
  let ajv = validators.get(key);
  if (ajv === undefined) {
    // strict: false lets annotations such as x-mcp-header through; no loadSchema, so a $ref to
    // a network URI is never fetched and fails compilation instead.
    const options = { strict: false, allErrors: true, validateFormats: false, validateSchema };
    ajv = dialect === "2020-12" ? new Ajv2020(options) : new Ajv(options);
    validators.set(key, ajv);
  }
  return ajv;
}

function describeAjvErrors(validate: ValidateFunction): string {
  return (validate.errors ?? [])
    .map((error) => `${error.instancePath || "(root)"} ${error.message ?? "is invalid"}`)
    .join("; ");
}
