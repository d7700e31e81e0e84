// rate-limiter-flexible is an optional peer: without it, a handler with `rateLimit` still starts,
// says why on stderr and to onError, and answers 500 rather than serving unlimited.
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";

const SRC = fileURLToPath(new URL("../../src/index.ts", import.meta.url));
const dir = mkdtempSync(join(tmpdir(), "mcp-mount-no-rlf-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// A resolve hook that finds no rate-limiter-flexible, as in an app that never installed it.
const HOOKS = `export async function resolve(specifier, context, next) {
  if (specifier.startsWith("rate-limiter-flexible")) {
    const error = new Error("Cannot find package " + specifier);
    error.code = "ERR_MODULE_NOT_FOUND";
    throw error;
  }
  return next(specifier, context);
}
`;
const REGISTER = `import { register } from "node:module";
register(${JSON.stringify(`file://${join(dir, "hooks.mjs")}`)});
`;
const SCRIPT = `const { createMcpHandler, McpServer } = await import(${JSON.stringify(SRC)});
const errors = [];
const mcp = createMcpHandler(new McpServer({ name: "m", version: "1.0.0" }), {
  rateLimit: { points: 5 },
  onError: (error) => errors.push(error.message),
});
const meta = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientCapabilities": {},
};
const response = await mcp.fetch(
  new Request("http://127.0.0.1/mcp", {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2026-07-28",
      "mcp-method": "tools/list",
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: { _meta: meta } }),
  }),
  { remoteAddress: "10.0.0.1" },
);
console.log(JSON.stringify({ status: response.status, body: await response.json(), errors }));
await mcp.close();
`;

describe("rateLimit without rate-limiter-flexible installed", () => {
  it("should answer 500 and say which package is missing", async () => {
    writeFileSync(join(dir, "hooks.mjs"), HOOKS);
    writeFileSync(join(dir, "register.mjs"), REGISTER);
    writeFileSync(join(dir, "script.mjs"), SCRIPT);
    const { stdout, stderr } = await promisify(execFile)(
      process.execPath,
      ["--import", "tsx", "--import", join(dir, "register.mjs"), join(dir, "script.mjs")],
      { cwd: fileURLToPath(new URL("../..", import.meta.url)) },
    );
    const outcome = JSON.parse(stdout.trim().split("\n").at(-1)!);
    expect(outcome.status).toBe(500);
    expect(outcome.body.error.code).toBe(-32603);
    const why = /rateLimit needs the optional peer dependency rate-limiter-flexible/;
    expect(stderr).toMatch(why);
    expect(outcome.errors).toEqual([expect.stringMatching(why)]);
  });
});
