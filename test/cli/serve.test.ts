// `mcp-mount serve`, run from the source with tsx as a real process in front of a real stdio
// upstream (test/helpers/gateway-upstream-server.ts), called by our client in both eras and by
// raw requests checked against the protocol's schemas: readiness, the drain, auth, Redis, and
// the command line's refusals.
import { execFile } from "node:child_process";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { resolve } from "node:path";
import { promisify } from "node:util";
import { exportJWK, generateKeyPair, SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { McpClient } from "../../src/client/index.js";
import { legacyCall, openSession } from "../helpers/legacy.js";
import { call, viaUrl } from "../helpers/modern.js";
import { type RedisServer, startRedisServer } from "../helpers/redis-server.js";
import { MAIN, type ServeProcess, startServe, TEST_UPSTREAM } from "./serve-process.js";

const ROOT = resolve(import.meta.dirname, "../..");
const UPSTREAM = TEST_UPSTREAM;
const SLOW = 60_000;

async function cli(...args: string[]): Promise<{ stdout: string; stderr: string; code: number }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(
      process.execPath,
      ["--import", "tsx", MAIN, ...args],
      { cwd: ROOT },
    );
    return { stdout, stderr, code: 0 };
  } catch (error) {
    const failed = error as { stdout: string; stderr: string; code: number };
    return { stdout: failed.stdout, stderr: failed.stderr, code: failed.code };
  }
}

const serve = (...flags: string[]) => startServe([...flags, ...TEST_UPSTREAM]);

const healthz = (url: string) => fetch(new URL("/healthz", url));

function echoText(result: { content: unknown[] }): unknown {
  return (result.content[0] as { text?: unknown } | undefined)?.text;
}

describe("mcp-mount serve", () => {
  let gateway: ServeProcess;

  beforeAll(async () => {
    gateway = await serve();
  }, SLOW);
  afterAll(() => gateway?.stop());

  it("should say where it listens, on stdout", () => {
    expect(gateway.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    expect(gateway.output()).toContain(`mcp-mount serve listening on ${gateway.url}\n`);
  });

  it.each(["modern", "legacy"] as const)(
    "should serve the upstream's tools to a %s client",
    async (era) => {
      const client = await McpClient.connect(gateway.url, { era });
      try {
        expect(client.era).toBe(era);
        const names = (await client.tools()).map((tool) => tool.name);
        expect(names).toEqual(expect.arrayContaining(["echo", "slow", "crash", "stderr"]));
        expect(echoText(await client.callTool("echo", { text: `hi ${era}` }))).toBe(`hi ${era}`);
        const prompt = await client.getPrompt("greet", { who: "Ada" });
        expect(JSON.stringify(prompt.messages)).toContain("Say hello to Ada");
      } finally {
        await client.close();
      }
    },
    SLOW,
  );

  it("should answer well-formed messages in either era", async () => {
    const modern = await call(viaUrl(gateway.url), "tools/call", {
      name: "echo",
      arguments: { text: "raw" },
    });
    expect(modern.result).toMatchObject({ content: [{ type: "text", text: "raw" }] });
    const send = viaUrl(gateway.url);
    const session = await openSession(send);
    const legacy = await legacyCall(send, session, "tools/call", {
      name: "echo",
      arguments: { text: "raw" },
    });
    expect(legacy.result).toMatchObject({ content: [{ type: "text", text: "raw" }] });
  });

  it("should be ready at /healthz, and answer 404 off its paths", async () => {
    const health = await healthz(gateway.url);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ ready: true, draining: false, store: "up" });
    expect((await fetch(new URL("/elsewhere", gateway.url))).status).toBe(404);
  });

  it("should pass the upstream's stderr to its own, prefixed", async () => {
    const client = await McpClient.connect(gateway.url);
    try {
      await client.callTool("stderr", { text: "a line from upstream" });
      await expect.poll(() => gateway.output()).toContain("[upstream] a line from upstream");
    } finally {
      await client.close();
    }
  });
});

describe("mcp-mount serve on SIGTERM", () => {
  it(
    "should finish a call in flight, answer 503 at /healthz meanwhile, and exit 0",
    async () => {
      const gateway = await serve();
      const client = await McpClient.connect(gateway.url, { era: "legacy" });
      const watcher = await McpClient.connect(gateway.url, { era: "modern" });
      try {
        const slow = client.callTool("slow", { ms: 3_000 });
        // The upstream counts the call as running: it is in flight through the gateway.
        await expect
          .poll(async () => {
            const stats = await watcher.callTool("stats", {});
            return (stats.structuredContent as { active: number } | undefined)?.active;
          })
          .toBe(1);
        gateway.child.kill("SIGTERM");
        await expect.poll(async () => (await healthz(gateway.url)).status).toBe(503);
        expect((await slow).structuredContent).toMatchObject({ finished: true });
        // A second signal would end it at once: this waits for the drain alone.
        expect(await gateway.exited()).toBe(0);
        expect(gateway.output()).toContain("draining");
      } finally {
        await client.close().catch(() => undefined);
        await watcher.close().catch(() => undefined);
        await gateway.stop();
      }
    },
    SLOW,
  );
});

describe("mcp-mount serve with --auth-issuer", () => {
  let jwks: Server;
  let gateway: ServeProcess;
  let sign: (subject: string) => Promise<string>;

  beforeAll(async () => {
    const { publicKey, privateKey } = await generateKeyPair("ES256", { extractable: true });
    const jwk = { ...(await exportJWK(publicKey)), kid: "k1", alg: "ES256" };
    jwks = createServer((_req, res) => {
      res
        .writeHead(200, { "content-type": "application/json" })
        .end(JSON.stringify({ keys: [jwk] }));
    });
    await new Promise<void>((done) => jwks.listen(0, "127.0.0.1", done));
    const jwksUrl = `http://127.0.0.1:${(jwks.address() as AddressInfo).port}/jwks.json`;
    gateway = await serve("--auth-issuer", "https://auth.example.com", "--jwks-url", jwksUrl);
    sign = (subject) =>
      new SignJWT({ sub: subject, aud: gateway.url })
        .setProtectedHeader({ alg: "ES256", kid: "k1" })
        .setIssuer("https://auth.example.com")
        .setIssuedAt()
        .setExpirationTime("5m")
        .sign(privateKey);
  }, SLOW);
  afterAll(async () => {
    await gateway?.stop();
    jwks?.close();
  });

  it("should refuse a call without a token, and name the issuer in its metadata", async () => {
    const refused = await fetch(gateway.url, { method: "POST", body: "{}" });
    expect(refused.status).toBe(401);
    expect(refused.headers.get("www-authenticate")).toContain("resource_metadata=");
    const metadata = await fetch(new URL("/.well-known/oauth-protected-resource/mcp", gateway.url));
    expect(await metadata.json()).toMatchObject({
      resource: gateway.url,
      authorization_servers: ["https://auth.example.com"],
    });
  });

  it.each(["modern", "legacy"] as const)(
    "should serve a %s client whose token the issuer signed",
    async (era) => {
      const headers = { authorization: `Bearer ${await sign("ada")}` };
      const client = await McpClient.connect(gateway.url, { era, headers });
      try {
        expect(echoText(await client.callTool("echo", { text: "signed" }))).toBe("signed");
      } finally {
        await client.close();
      }
    },
    SLOW,
  );
});

describe("mcp-mount serve with --redis", () => {
  let redis: RedisServer;
  let gateways: ServeProcess[] = [];

  beforeAll(async () => {
    redis = await startRedisServer();
    gateways = await Promise.all([serve("--redis", redis.url), serve("--redis", redis.url)]);
  }, SLOW);
  afterAll(async () => {
    await Promise.all(gateways.map((gateway) => gateway.stop()));
    await redis?.close();
  });

  it("should serve a legacy session opened on one process from another", async () => {
    const [first, second] = gateways as [ServeProcess, ServeProcess];
    const session = await openSession(viaUrl(first.url));
    const answer = await legacyCall(viaUrl(second.url), session, "tools/call", {
      name: "echo",
      arguments: { text: "shared" },
    });
    expect(answer.result).toMatchObject({ content: [{ type: "text", text: "shared" }] });
    expect(await (await healthz(second.url)).json()).toMatchObject({ ready: true, store: "up" });
  });
});

describe("mcp-mount serve --upstream", () => {
  let front: ServeProcess;
  let back: ServeProcess;

  beforeAll(async () => {
    back = await serve();
    front = await startServe(["--upstream", back.url]);
  }, SLOW);
  afterAll(async () => {
    await front?.stop();
    await back?.stop();
  });

  it.each(["modern", "legacy"] as const)(
    "should serve an HTTP upstream to a %s client",
    async (era) => {
      const client = await McpClient.connect(front.url, { era });
      try {
        expect(echoText(await client.callTool("echo", { text: "twice" }))).toBe("twice");
      } finally {
        await client.close();
      }
    },
    SLOW,
  );
});

describe("mcp-mount serve with --cors and --rate-limit", () => {
  let gateway: ServeProcess;

  beforeAll(async () => {
    gateway = await serve("--cors", "https://app.example.com", "--rate-limit", "2/1m");
  }, SLOW);
  afterAll(() => gateway?.stop());

  it("should answer the allowed origin's preflight, and refuse another origin", async () => {
    const preflight = await fetch(gateway.url, {
      method: "OPTIONS",
      headers: {
        origin: "https://app.example.com",
        "access-control-request-method": "POST",
        "access-control-request-headers": "content-type, mcp-protocol-version",
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("access-control-allow-origin")).toBe("https://app.example.com");
    const other = await fetch(gateway.url, {
      method: "POST",
      headers: { origin: "https://evil.example", "content-type": "application/json" },
      body: "{}",
    });
    expect(other.status).toBe(403);
  });

  it("should answer 429 beyond the budget", async () => {
    const send = viaUrl(gateway.url);
    const echo = { name: "echo", arguments: { text: "counted" } };
    // The preflight was free, the refused origin was not counted: two calls fit, not three.
    for (const _ of [1, 2]) expect((await call(send, "tools/call", echo)).status).toBe(200);
    const over = await send({
      method: "POST",
      headers: { "content-type": "application/json", "mcp-protocol-version": "2026-07-28" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 9, method: "tools/call", params: echo }),
    });
    expect(over.status).toBe(429);
    expect(over.headers.get("retry-after")).toMatch(/^\d+$/);
  });
});

describe("mcp-mount serve's command line", () => {
  it.each([
    [
      ["serve", "--auth-issuer", "https://a.example", ...UPSTREAM],
      "--auth-issuer needs --jwks-url",
    ],
    [["serve", "--verbose", ...UPSTREAM], "Unknown option '--verbose'"],
    [["serve"], "name the upstream"],
    [["serve", "--scope", "principal", ...UPSTREAM], "--scope principal needs --auth-issuer"],
  ])("should refuse %j with the usage and exit code 2", async (argv, message) => {
    const { code, stdout, stderr } = await cli(...argv);
    expect(code).toBe(2);
    expect(stdout).toBe("");
    expect(stderr).toContain(message);
    expect(stderr).toContain("mcp-mount serve [options] -- <command> [args...]");
  });

  it("should print its usage with --help", async () => {
    const { code, stdout } = await cli("serve", "--help");
    expect(code).toBe(0);
    expect(stdout).toContain("--upstream <url>");
    expect(stdout).toContain("--redis-cluster");
  });

  it("should exit 1 with the reason when Redis does not answer", async () => {
    const { code, stderr } = await cli("serve", "--redis", "redis://127.0.0.1:1", ...UPSTREAM);
    expect(code).toBe(1);
    expect(stderr).toContain("Redis did not answer");
  });
});
