import { PassThrough } from "node:stream";
import { expect } from "vitest";
import { type StdioOptions, serveStdio } from "../../src/adapters/stdio.js";
import { createFixtureServer, type Probe } from "./fixture-server.js";

/** One JSON-RPC message the stdio server wrote. */
export type StdioLine = Record<string, unknown>;

/**
 * An in-process stdio server of the fixture on pipes, with a line reader over its output;
 * `options` adds to (or overrides) the server's options.
 */
export function stdioPipes(probe?: Probe, options: StdioOptions = {}) {
  const input = new PassThrough();
  const output = new PassThrough();
  const server = createFixtureServer(probe);
  const running = serveStdio(server, { input, output, secret: "s", onError: () => {}, ...options });
  const lines: StdioLine[] = [];
  let buffer = "";
  output.on("data", (chunk: Buffer) => {
    buffer += chunk.toString();
    for (let at = buffer.indexOf("\n"); at !== -1; at = buffer.indexOf("\n")) {
      lines.push(JSON.parse(buffer.slice(0, at)));
      buffer = buffer.slice(at + 1);
    }
  });
  /** Writes a message, or a raw line when given a string. */
  const send = (message: unknown) =>
    input.write(typeof message === "string" ? `${message}\n` : `${JSON.stringify(message)}\n`);
  /** The first line that matches, once one came out. */
  const waitFor = async (predicate: (line: StdioLine) => boolean, ms = 3_000) => {
    await expect
      .poll(() => lines.find(predicate), { timeout: ms, message: "no matching line came out" })
      .toBeDefined();
    return lines.find(predicate) as StdioLine;
  };
  return { input, server, running, lines, send, waitFor };
}
