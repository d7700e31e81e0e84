import { createInterface } from "node:readline/promises";
import type { JsonObject } from "../protocol/messages.js";
import { printMessage, toPrintable } from "./terminal.js";

/**
 * Answers an elicitation on the terminal: shows the message and asks for each field of a
 * form; without a terminal, or for URL mode, it says what it declined and declines.
 */
export async function askOnTerminal(params: JsonObject): Promise<JsonObject> {
  const message = String(params.message ?? "The server asks for input");
  if (!process.stdin.isTTY || params.mode === "url") {
    const why = params.mode === "url" ? "URL elicitation is not supported" : "no terminal";
    printMessage(`The server asked: ${message}\n  declined (${why})`);
    return { action: "decline" };
  }
  const schema = (params.requestedSchema ?? {}) as { properties?: Record<string, JsonObject> };
  const terminal = createInterface({ input: process.stdin, output: process.stderr });
  // Every prompt goes through toPrintable: a title cannot move the cursor to forge "Send?".
  const ask = async (prompt: string) => (await terminal.question(toPrintable(prompt))).trim();
  try {
    printMessage(message);
    const content: JsonObject = {};
    for (const [name, field] of Object.entries(schema.properties ?? {})) {
      const answer = await ask(`  ${String(field.title ?? name)}: `);
      if (answer === "") continue;
      if (field.type === "boolean") content[name] = /^(y|yes|true|1)$/i.test(answer);
      else if (field.type === "number" || field.type === "integer") content[name] = Number(answer);
      else content[name] = answer;
    }
    return /^n/i.test(await ask("Send? [Y/n] "))
      ? { action: "decline" }
      : { action: "accept", content };
  } finally {
    terminal.close();
  }
}
