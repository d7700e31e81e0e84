import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { Ajv2020 } from "ajv/dist/2020.js";

/**
 * The extensions' JSON Schemas: skills written from SEP-2640 (test/fixtures/ext/skills.schema.json),
 * MCP Apps' as its package ships it: `assertExtSchema("skills", "GetSkillResult", value)`,
 * `assertExtSchema("apps", "McpUiToolMeta", value)`.
 */
const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
ajv.addSchema(
  JSON.parse(
    readFileSync(
      fileURLToPath(new URL("../fixtures/ext/skills.schema.json", import.meta.url)),
      "utf8",
    ),
  ),
);
// MCP Apps publishes its own: @modelcontextprotocol/ext-apps/schema.json (McpUiToolMeta, ...).
const APPS_SCHEMA = createRequire(import.meta.url).resolve(
  "@modelcontextprotocol/ext-apps/schema.json",
);
ajv.addSchema(JSON.parse(readFileSync(APPS_SCHEMA, "utf8")), "apps");

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
