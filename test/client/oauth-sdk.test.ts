import { type ChildProcess, spawn } from "node:child_process";
import { createServer } from "node:net";
import { join, resolve } from "node:path";
import { McpClient } from "mcp-mount/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "../..");
/** The official SDK v1's Streamable HTTP example, whose --oauth mode runs a demo authorization server. */
const EXAMPLE = join(
  ROOT,
  "node_modules/@modelcontextprotocol/sdk/dist/esm/examples/server/simpleStreamableHttp.js",
);

/** A port free right now (the example takes fixed ports from its environment). */
function freePort(): Promise<number> {
  return new Promise((done) => {
    const probe = createServer().listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => done(port));
    });
  });
}

let child: ChildProcess;
let url: string;

beforeAll(async () => {
  const [mcpPort, authPort] = [await freePort(), await freePort()];
  child = spawn(process.execPath, [EXAMPLE, "--oauth", "--oauth-strict"], {
    env: { ...process.env, MCP_PORT: String(mcpPort), MCP_AUTH_PORT: String(authPort) },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  await new Promise<void>((done, fail) => {
    const read = (chunk: Buffer) => {
      output += chunk;
      if (
        /MCP Streamable HTTP Server listening/.test(output) &&
        /Authorization Server listening/.test(output)
      )
        done();
    };
    child.stdout?.on("data", read);
    child.stderr?.on("data", read);
    child.once("exit", (code) =>
      fail(new Error(`the SDK example exited with ${code}:\n${output}`)),
    );
  });
  url = `http://localhost:${mcpPort}/mcp`;
}, 30_000);

afterAll(() => {
  child?.kill("SIGTERM");
});

describe("McpClient signing in to the official SDK's OAuth example server", () => {
  it("should register, sign in with PKCE and a resource the server checks, and call a tool", async () => {
    const seen: URL[] = [];
    const client = await McpClient.connect(url, {
      auth: {
        redirectUri: "http://127.0.0.1:9/callback",
        redirect: async (authorizationUrl) => {
          seen.push(authorizationUrl);
          const response = await fetch(authorizationUrl, { redirect: "manual" });
          return response.headers.get("location")!;
        },
      },
    });
    const result = await client.callTool("greet", { name: "OAuth" });
    expect(result.content).toEqual([{ type: "text", text: "Hello, OAuth!" }]);
    expect(seen).toHaveLength(1);
    expect(seen[0]!.searchParams.get("resource")).toBe(url);
    expect(client.era).toBe("legacy");
    await client.close();
  });
});
