import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Ajv2020 } from "ajv/dist/2020.js";

/**
 * The Server Card schema the extension publishes: `schema.json` of
 * modelcontextprotocol/experimental-ext-server-card (commit 8924e08, 2026-07-24, sha256
 * 2c772b51…f042), copied unchanged to test/fixtures/server-card.schema.json (Apache-2.0). It
 * holds its definitions under `$defs` with no root: a card is `#/$defs/ServerCard`. Formats
 * (`uri`) are not checked by ajv here; the tests parse the card's URLs themselves.
 */
const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
ajv.addSchema(
  JSON.parse(
    readFileSync(
      fileURLToPath(new URL("../fixtures/server-card.schema.json", import.meta.url)),
      "utf8",
    ),
  ),
  "server-card",
);

/** Throws unless `value` is a Server Card the published schema accepts. */
export function assertServerCard(value: unknown): void {
  const validate = ajv.getSchema("server-card#/$defs/ServerCard");
  if (!validate) throw new Error("No ServerCard definition in server-card.schema.json");
  if (!validate(value)) {
    const errors = (validate.errors ?? []).slice(0, 5).map((e) => `${e.instancePath} ${e.message}`);
    throw new Error(
      `ServerCard rejected ${JSON.stringify(value).slice(0, 400)}: ${errors.join("; ")}`,
    );
  }
}
