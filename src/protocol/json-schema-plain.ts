import { isObject } from "./messages.js";

// Ajv checks every schema against its dialect's meta-schema before compiling it, and compiling
// the 2020-12 meta-schema is the largest cost of a server's cold start (about 60 ms, a fifth of
// the CPU until its first answer). Most tool schemas use a few keywords whose values are easy to
// check by hand: for those the meta-schema could only say yes, so the check is skipped. Anything
// else (other keywords, `$ref`, `$id`, vendor annotations) still meets the meta-schema.

const JSON_TYPES = new Set(["null", "boolean", "object", "array", "number", "string", "integer"]);

const isString = (value: unknown) => typeof value === "string";
const isNumber = (value: unknown) => typeof value === "number" && Number.isFinite(value);
const isCount = (value: unknown) => Number.isInteger(value) && (value as number) >= 0;
const isType = (value: unknown) =>
  (isString(value) && JSON_TYPES.has(value as string)) ||
  (Array.isArray(value) &&
    value.length > 0 &&
    value.every((item) => JSON_TYPES.has(item)) &&
    new Set(value).size === value.length);
const isUniqueStrings = (value: unknown) =>
  Array.isArray(value) && value.every(isString) && new Set(value).size === value.length;
const any = () => true;

/** The keywords a plain schema may use, each with the check its value must pass. */
const KEYWORDS: Record<string, (value: unknown, depth: number) => boolean> = {
  type: isType,
  title: isString,
  description: isString,
  format: isString,
  default: any,
  const: any,
  enum: Array.isArray,
  examples: Array.isArray,
  required: isUniqueStrings,
  minimum: isNumber,
  maximum: isNumber,
  exclusiveMinimum: isNumber,
  exclusiveMaximum: isNumber,
  multipleOf: (value) => isNumber(value) && (value as number) > 0,
  minLength: isCount,
  maxLength: isCount,
  minItems: isCount,
  maxItems: isCount,
  minProperties: isCount,
  maxProperties: isCount,
  uniqueItems: (value) => typeof value === "boolean",
  items: (value, depth) => typeof value === "boolean" || isPlainSchema(value, depth + 1),
  additionalProperties: (value, depth) =>
    typeof value === "boolean" || isPlainSchema(value, depth + 1),
  properties: (value, depth) =>
    isObject(value) && Object.values(value).every((item) => isPlainSchema(item, depth + 1)),
};

/**
 * Whether `schema` uses only keywords of {@link KEYWORDS} with values they accept, at every
 * level: such a schema is valid in 2020-12 and draft-07 alike, so its meta-schema check is moot.
 */
export function isPlainSchema(schema: unknown, depth = 0): boolean {
  // Deeper schemas are bounded elsewhere; here they just take the general path.
  if (!isObject(schema) || depth > 16) return false;
  for (const [keyword, value] of Object.entries(schema)) {
    if (keyword === "$schema" && depth === 0) continue;
    const check = KEYWORDS[keyword];
    if (check === undefined || !check(value, depth)) return false;
  }
  return true;
}
