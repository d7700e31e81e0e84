import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { modernHeaders, modernMeta } from "../helpers/modern.js";

const ROOT = resolve(fileURLToPath(new URL("../..", import.meta.url)));

// A module hook that names every module the child loads, appended to a file at once. Hooks run
// on their own thread: what they write to stderr reaches it through the main thread, which can
// exit first, so on a loaded machine the last names were lost. A synchronous append is done
// before the module it names is even evaluated.
const HOOKS = `import { appendFileSync } from "node:fs";
export async function load(url, context, next) {
  const result = await next(url, context);
  appendFileSync(process.env.LOADED_LOG, url + "\\n");
  return result;
}`;
const REGISTER = `import { register } from "node:module";
register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(HOOKS)}`)});`;

/**
 * Runs `script` (an ES module, importing the sources through tsx) in a fresh Node process and
 * returns the modules it loaded (our sources by path, dependencies by package name) and what it
 * printed.
 */
async function run(script: string): Promise<{ loaded: Set<string>; stdout: string }> {
  const dir = await mkdtemp(join(tmpdir(), "mcp-mount-loaded-"));
  const log = join(dir, "loaded.txt");
  try {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [
        "--import",
        "tsx",
        "--import",
        `data:text/javascript,${encodeURIComponent(REGISTER)}`,
        "--input-type=module",
        "--eval",
        script,
      ],
      { cwd: ROOT, env: { ...process.env, LOADED_LOG: log } },
    );
    const loaded = new Set<string>();
    for (const url of (await readFile(log, "utf8")).split("\n")) {
      if (!url) continue;
      const dependency = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url)?.[1];
      loaded.add(dependency ?? url.replace(`file://${ROOT}/`, ""));
    }
    return { loaded, stdout };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const JWT_AUTH = `
  import { jwtAuth } from "./src/auth/index.ts";
  const auth = jwtAuth({ issuer: "https://issuer.example", secret: "s".repeat(32) });
`;

const ECHO_CLIENT = { name: "lazy-imports", version: "1.0.0" };

/** A handler serving an echo tool, and `call(method, params)` posting one modern request to it. */
const ECHO_SERVER = `
  import { createMcpHandler, McpServer } from "./src/index.ts";
  const server = new McpServer({ name: "echo", version: "1.0.0" });
  server.tool(
    { name: "echo", input: { type: "object", properties: { text: { type: "string" } } } },
    ({ text }) => text,
  );
  const mcp = createMcpHandler(server);

  const call = async (method, params) => {
    const body = { jsonrpc: "2.0", id: 1, method, params: { ...params, _meta: ${JSON.stringify(modernMeta())} } };
    const response = await mcp.fetch(new Request("http://127.0.0.1/mcp", {
      method: "POST",
      headers: { ...${JSON.stringify(modernHeaders("tools/call"))}, "mcp-method": method, "mcp-name": params.name },
      body: JSON.stringify(body),
    }));
    return response.json();
  };
`;

/**
 * A tracer SDK's modules loaded (which registers nothing), and `registerSdk()`, which registers
 * it globally at once and returns its in-memory exporter.
 */
const SDK = `
  const { trace } = await import("@opentelemetry/api");
  const { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } = await import(
    "@opentelemetry/sdk-trace-base"
  );
  const registerSdk = () => {
    const exporter = new InMemorySpanExporter();
    const spanProcessors = [new SimpleSpanProcessor(exporter)];
    trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors }));
    return exporter;
  };
`;

// Each case starts a Node process that compiles the sources with tsx: slow on a loaded machine.
describe("what importing the package loads", { timeout: 30_000 }, () => {
  it("should not load jose when jwtAuth is only built", async () => {
    const { loaded } = await run(JWT_AUTH);
    expect(loaded.has("src/auth/jwt.ts")).toBe(true);
    expect(loaded.has("jose")).toBe(false);
  });

  it("should load jose once jwtAuth verifies a token, and refuse a malformed one", async () => {
    const { loaded, stdout } = await run(`${JWT_AUTH}
      const verdict = await auth.verify("not.a.jwt", "https://api.example/mcp");
      console.log(JSON.stringify(verdict));
    `);
    expect(JSON.parse(stdout)).toEqual({
      valid: false,
      description: "The access token is malformed",
    });
    expect(loaded.has("jose")).toBe(true);
  });

  it("should not load @opentelemetry/api while no SDK is registered", async () => {
    const { loaded, stdout } = await run(`${ECHO_SERVER}
      const answer = await call("tools/call", { name: "echo", arguments: { text: "hi" } });
      console.log(JSON.stringify(answer.result.content));
    `);
    expect(JSON.parse(stdout)).toEqual([{ type: "text", text: "hi" }]);
    expect(loaded.has("src/telemetry/telemetry.ts")).toBe(true);
    expect(loaded.has("@opentelemetry/api")).toBe(false);
  });

  it("should load it for an SDK registered after the handler, and trace the first request", async () => {
    const { stdout } = await run(`${ECHO_SERVER}${SDK}
      const exporter = registerSdk();
      await call("tools/call", { name: "echo", arguments: { text: "hi" } });
      console.log(JSON.stringify(exporter.getFinishedSpans().map((span) => span.name)));
    `);
    expect(JSON.parse(stdout)).toEqual(["tools/call echo"]);
  });

  it("should answer and trace what stdio read while the API loaded, though the input ended", async () => {
    const legacy = { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: ECHO_CLIENT };
    const input = [
      { jsonrpc: "2.0", id: 1, method: "initialize", params: legacy },
      { jsonrpc: "2.0", method: "notifications/initialized" },
      { jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "echo", arguments: {} } },
    ];
    const { stdout } = await run(`${ECHO_SERVER}${SDK}
      const { PassThrough, Readable } = await import("node:stream");
      const { serveStdio } = await import("./src/adapters/stdio.ts");
      const output = new PassThrough();
      const written = [];
      output.on("data", (chunk) => written.push(String(chunk)));
      const lines = ${JSON.stringify(input)}.map((m) => JSON.stringify(m) + "\\n").join("");
      const stdio = serveStdio(server, { input: Readable.from([lines]), output });
      // Registered after the server was built, before it read its input.
      const exporter = registerSdk();
      await stdio.done;
      const ids = written.join("").split("\\n").filter(Boolean).map((line) => JSON.parse(line).id);
      const spans = exporter.getFinishedSpans().map((span) => span.name).sort();
      console.log(JSON.stringify({ ids, spans }));
    `);
    expect(JSON.parse(stdout)).toEqual({
      ids: [1, 2],
      spans: ["initialize", "notifications/initialized", "tools/call echo"],
    });
  });

  it("should trace a client's handshake when an SDK registered just before it connects", async () => {
    const { stdout } = await run(`${ECHO_SERVER}${SDK}
      const { McpClient } = await import("./src/client/index.ts");
      const exporter = registerSdk();
      const client = await McpClient.connect("http://127.0.0.1/mcp", {
        fetch: (input, init) => mcp.fetch(new Request(input, init)),
      });
      await client.callTool("echo", { text: "hi" });
      await client.close();
      const clientSpans = exporter.getFinishedSpans().filter((span) => span.kind === 2);
      console.log(JSON.stringify(clientSpans.map((span) => span.name)));
    `);
    expect(JSON.parse(stdout)).toEqual(["server/discover", "tools/call echo"]);
  });

  it("should not load ajv for the client, which only interprets a server's schemas", async () => {
    const { loaded } = await run(`import "./src/client/index.ts";`);
    expect(loaded.has("src/client/tool.ts")).toBe(true);
    expect(loaded.has("@cfworker/json-schema")).toBe(true);
    expect(loaded.has("ajv")).toBe(false);
  });
});
