import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { Cluster } from "ioredis";
import { Agent, fetch as undiciFetch } from "undici";
import { startRedisCluster } from "../../examples/shared/redis-cluster.js";
import { legacyCall, legacyHeaders, openSession, readLegacy } from "../helpers/legacy.js";
import { call, modernHeaders, modernMeta, type Send, viaUrl } from "../helpers/modern.js";
import { assertModernMessage } from "../helpers/spec.js";
import { SseReader } from "../helpers/stream.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/**
 * Starts an example with `PORT=0` as `npm run` would (through tsx, importing the built package),
 * and resolves with the first URL matching `printed` once it appears in what the example prints.
 */
async function startExample(
  script: string,
  printed: RegExp,
  env: Record<string, string> = {},
): Promise<{ child: ChildProcess; url: string; output: () => string }> {
  const child = spawn(process.execPath, ["--import", "tsx", script], {
    cwd: ROOT,
    env: { ...process.env, PORT: "0", MCP_SECRET: "example-test", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  const url = await new Promise<string>((resolve, reject) => {
    const read = (chunk: Buffer) => {
      output += chunk;
      const found = printed.exec(output)?.[1];
      if (found) resolve(found);
    };
    child.stdout?.on("data", read);
    child.stderr?.on("data", read);
    child.once("exit", (code) => reject(new Error(`${script} exited with ${code}:\n${output}`)));
  });
  return { child, url, output: () => output };
}

/** Sends SIGTERM and waits for the process to exit; resolves with its exit code. */
async function stop(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null) return child.exitCode;
  const exited = once(child, "exit");
  child.kill("SIGTERM");
  const [code] = await exited;
  return code as number | null;
}

describe("examples/express/server.ts (npm run example)", () => {
  it("should print the port it bound when started with PORT=0, and serve there", async () => {
    // Matched once the whole "Try it" command is out.
    const example = await startExample(
      "examples/express/server.ts",
      /listening on (http:\/\/\S+\/mcp)[\s\S]*-d '/,
    );
    try {
      expect(example.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
      expect(new URL(example.url).port).not.toBe("0");
      // The curl line it prints names the same URL.
      expect(example.output()).toContain(`curl -s ${example.url} `);
      const discover = await call(viaUrl(example.url), "server/discover");
      expect(discover.status).toBe(200);
      expect(discover.result.supportedVersions).toContain("2026-07-28");
      const init = await fetch(example.url, {
        method: "POST",
        headers: legacyHeaders(),
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "initialize",
          params: {
            protocolVersion: "2025-11-25",
            capabilities: {},
            clientInfo: { name: "example-test", version: "0.0.0" },
          },
        }),
      });
      const exchange = readLegacy(
        { status: init.status, headers: init.headers, text: await init.text() },
        "initialize",
      );
      expect(exchange.result.serverInfo).toMatchObject({ name: "mcp-mount-example" });
      // The adder app (an MCP App): declared, its view served, its app-only tool listed.
      expect(discover.result.capabilities).toMatchObject({
        extensions: { "io.modelcontextprotocol/ui": { mimeTypes: ["text/html;profile=mcp-app"] } },
      });
      const view = await call(viaUrl(example.url), "resources/read", {
        uri: "ui://mcp-mount-example/adder.html",
      });
      expect(view.result.contents).toMatchObject([{ mimeType: "text/html;profile=mcp-app" }]);
      expect(init.headers.get("mcp-session-id")).toBeTruthy();
    } finally {
      expect(await stop(example.child)).toBe(0);
    }
  }, 40_000);
});

describe("examples/cluster/server.ts (npm run example:cluster)", () => {
  it("should print the port its workers share when started with PORT=0", async () => {
    const example = await startExample(
      "examples/cluster/server.ts",
      /workers serving (http:\/\/\S+\/mcp)[\s\S]*-d '/,
      { WORKERS: "2" },
    );
    try {
      expect(new URL(example.url).port).not.toBe("0");
      expect(example.output()).toContain(`curl -si ${example.url} `);
      const discover = await call(viaUrl(example.url), "server/discover");
      expect(discover.status).toBe(200);
    } finally {
      expect(await stop(example.child)).toBe(0);
    }
  }, 60_000);
});

describe("examples/cluster/server.ts on a Redis Cluster (REDIS_CLUSTER_NODES)", () => {
  it("should keep its workers' sessions in the cluster and serve them on every worker", async () => {
    const redisCluster = await startRedisCluster();
    const redis = new Cluster(redisCluster.startupNodes);
    try {
      const example = await startExample(
        "examples/cluster/server.ts",
        /workers serving (http:\/\/\S+\/mcp)[\s\S]*-d '/,
        { WORKERS: "2", REDIS_CLUSTER_NODES: redisCluster.spec },
      );
      try {
        expect(example.output()).toContain("sharing a Redis Cluster");
        // A new connection per request: node:cluster deals connections out round-robin.
        const send: Send = async (request) => {
          const dispatcher = new Agent();
          try {
            const response = await undiciFetch(example.url, { ...request, dispatcher });
            const headers = new Headers([...response.headers]);
            return { status: response.status, headers, text: await response.text() };
          } finally {
            await dispatcher.close();
          }
        };
        const sessionId = await openSession(send);
        expect(await redis.exists(`mcp:{s:${sessionId}}:rec`)).toBe(1);
        const servedBy = new Set<string>();
        for (let i = 0; i < 6; i++) {
          const echo = await legacyCall(send, sessionId, "tools/call", {
            name: "echo",
            arguments: { text: `hi ${i}` },
          });
          expect(echo.status).toBe(200);
          expect(echo.result.content).toEqual([{ type: "text", text: `hi ${i}` }]);
          servedBy.add(echo.headers.get("x-served-by") ?? "");
        }
        expect(servedBy.size).toBe(2);
      } finally {
        expect(await stop(example.child)).toBe(0);
      }
    } finally {
      redis.disconnect();
      await redisCluster.close();
    }
  }, 90_000);
});

describe("examples/express/server.ts on SIGTERM (a rolling deploy)", () => {
  it("should let a call in flight finish, then exit 0", async () => {
    const example = await startExample(
      "examples/express/server.ts",
      /listening on (http:\/\/\S+\/mcp)[\s\S]*-d '/,
      { SHUTDOWN_GRACE_MS: "10000" },
    );
    try {
      const response = await fetch(example.url, {
        method: "POST",
        headers: modernHeaders("tools/call", "countdown"),
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "tools/call",
          params: {
            name: "countdown",
            arguments: { n: 20 },
            _meta: { ...modernMeta(), progressToken: "t" },
          },
        }),
      });
      const reader = new SseReader(response.body!);
      assertModernMessage(await reader.next(10_000), "notifications/progress");
      const exited = once(example.child, "exit");
      example.child.kill("SIGTERM");
      let last: Record<string, unknown> | undefined;
      for (let message = await reader.next(10_000); message; message = await reader.next(10_000))
        last = message;
      assertModernMessage(last, "tools/call");
      expect(last).toMatchObject({
        id: 1,
        result: { content: [{ type: "text", text: "Lift-off!" }] },
      });
      const [code] = await exited;
      expect(code).toBe(0);
    } finally {
      example.child.kill("SIGKILL");
    }
  });
});

describe.each([
  ["examples/express/server.ts", /listening on (http:\/\/\S+\/mcp)/],
  ["examples/conformance/server.ts", /listening on (http:\/\/\S+\/mcp)/],
])("%s with MCP_CORS_ORIGINS", (script, printed) => {
  const PAGE = "https://app.example.com";
  const preflight = (url: string, origin: string) =>
    fetch(url, {
      method: "OPTIONS",
      headers: {
        origin,
        "access-control-request-method": "POST",
        "access-control-request-headers": "content-type, mcp-protocol-version, mcp-method",
      },
    });

  it("should answer the listed origins' preflights and requests with CORS, and refuse others", async () => {
    const example = await startExample(script, printed, {
      MCP_CORS_ORIGINS: ` http://localhost:5173 , ${PAGE}`,
    });
    try {
      const allowed = await preflight(example.url, PAGE);
      expect(allowed.status).toBe(204);
      expect(allowed.headers.get("access-control-allow-origin")).toBe(PAGE);
      expect(allowed.headers.get("access-control-allow-headers")).toContain("Mcp-Method");
      const refused = await preflight(example.url, "http://localhost:8080");
      expect(refused.status).toBe(403);
      expect(refused.headers.get("access-control-allow-origin")).toBeNull();
      const discover = await fetch(example.url, {
        method: "POST",
        headers: { ...modernHeaders("server/discover"), origin: PAGE },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "server/discover",
          params: { _meta: modernMeta() },
        }),
      });
      expect(discover.status).toBe(200);
      expect(discover.headers.get("access-control-allow-origin")).toBe(PAGE);
      assertModernMessage(await discover.json(), "server/discover");
    } finally {
      expect(await stop(example.child)).toBe(0);
    }
  });
});
