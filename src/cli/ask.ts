import { createInterface } from "node:readline/promises";
import type { JsonObject } from "../protocol/messages.js";

/**
 * Answers an elicitation on the terminal: shows the message and asks for each field of a
 * form; without a terminal, or for URL mode, it declines.
 */
export async function askOnTerminal(params: JsonObject): Promise<JsonObject> {
  if (!process.stdin.isTTY || params.mode === "url") return { action: "decline" };
  const schema = (params.requestedSchema ?? {}) as { properties?: Record<string, JsonObject> };
  const terminal = createInterface({ input: process.stdin, output: process.stderr });
  try {
    console.error(String(params.message ?? "The server asks for input"));
    const content: JsonObject = {};
    for (const [name, field] of Object.entries(schema.properties ?? {})) {
      const answer = (await terminal.question(`  ${String(field.title ?? name)}: `)).trim();
      if (answer === "") continue;
      if (field.type === "boolean") content[name] = /^(y|yes|true|1)$/i.test(answer);
      else if (field.type === "number" || field.type === "integer") content[name] = Number(answer);
      else content[name] = answer;
    }
    const go = (await terminal.question("Send? [Y/n] ")).trim();
    return /^n/i.test(go) ? { action: "decline" } : { action: "accept", content };
  } finally {
    terminal.close();
  }
}
