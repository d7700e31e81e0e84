import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Ajv2020 } from "ajv/dist/2020.js";

/**
 * The extensions' JSON Schemas written from their texts (test/fixtures/ext/*.schema.json),
 * each file's `$id` its name: `assertExtSchema("skills", "GetSkillResult", value)`.
 */
const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
for (const name of ["skills", "apps"]) {
  const file = fileURLToPath(new URL(`../fixtures/ext/${name}.schema.json`, import.meta.url));
  try {
    ajv.addSchema(JSON.parse(readFileSync(file, "utf8")));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
}

/** Throws unless `value` matches definition `def` of extension schema `schema`. */
export function assertExtSchema(schema: string, def: string, value: unknown): void {
  const validate = ajv.getSchema(`${schema}#/$defs/${def}`);
  if (!validate) throw new Error(`No definition ${def} in ${schema}.schema.json`);
  if (!validate(value)) {
    const errors = (validate.errors ?? []).slice(0, 5).map((e) => `${e.instancePath} ${e.message}`);
    throw new Error(
      `${schema}#${def} rejected ${JSON.stringify(value).slice(0, 400)}: ${errors.join("; ")}`,
    );
  }
}
