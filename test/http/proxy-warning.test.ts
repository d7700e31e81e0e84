// An endpoint behind a proxy it does not trust: every anonymous client has the proxy's address,
// so the per-client caps hold all of them together. Said once, through real sockets.
import { afterEach, describe, expect, it, vi } from "vitest";
import { bearerAuth } from "../../src/auth/index.js";
import { createMcpHandler, type McpHandlerOptions, McpServer } from "../../src/index.js";
import { call, withBearer } from "../helpers/modern.js";
import { type Mounted, mount } from "../helpers/transports.js";

const mounted: Mounted[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  for (const server of mounted.splice(0)) await server.close();
});

/** A served endpoint whose onError collects what it is told. */
async function endpoint(transport: "node" | "express", options: McpHandlerOptions = {}) {
  const server = new McpServer({ name: "behind-a-proxy", version: "1.0.0" });
  server.tool({ name: "hello" }, () => "hello");
  const warnings: string[] = [];
  const mcp = createMcpHandler(server, {
    onError: (error) => warnings.push(error instanceof Error ? error.message : String(error)),
    ...options,
  });
  const served = await mount(transport, mcp);
  mounted.push(served);
  return { send: served.send, warnings };
}

const FORWARDED = { "x-forwarded-for": "198.51.100.7" };

describe.each(["node", "express"] as const)(
  "a proxy without trustProxy, through %s",
  (transport) => {
    it("should be told once through onError, naming trustProxy", async () => {
      const { send, warnings } = await endpoint(transport);
      for (let n = 0; n < 3; n++)
        expect((await call(send, "tools/list", {}, { headers: FORWARDED })).status).toBe(200);
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toMatch(/X-Forwarded-For but trustProxy is not set/);
      expect(warnings[0]).toMatch(/rate-limit budget, open streams, sessions/);
    });

    it("should be told on the console when the app has no onError", async () => {
      const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
      const { send } = await endpoint(transport, {
        onError: undefined,
        rateLimit: { points: 100 },
      });
      await call(send, "tools/list", {}, { headers: FORWARDED });
      await call(send, "tools/call", { name: "hello", arguments: {} }, { headers: FORWARDED });
      expect(warn).toHaveBeenCalledTimes(1);
      expect(String(warn.mock.calls[0]?.[0])).toMatch(/Set createMcpHandler's trustProxy/);
    });

    it("should be told of a Forwarded header, and that trustProxy reads X-Forwarded-For", async () => {
      const { send, warnings } = await endpoint(transport);
      await call(send, "tools/list", {}, { headers: { forwarded: "for=198.51.100.7" } });
      expect(warnings).toEqual([expect.stringMatching(/carries Forwarded.*reads X-Forwarded-For/)]);
    });

    it("should not be told without a forwarded header", async () => {
      const { send, warnings } = await endpoint(transport, { rateLimit: { points: 100 } });
      expect((await call(send, "tools/list")).status).toBe(200);
      expect(warnings).toEqual([]);
    });

    it("should not be told with trustProxy set", async () => {
      const { send, warnings } = await endpoint(transport, { trustProxy: true });
      expect((await call(send, "tools/list", {}, { headers: FORWARDED })).status).toBe(200);
      expect(warnings).toEqual([]);
    });

    it("should not be told when no cap keys callers by address", async () => {
      // No rateLimit, no cap on streams per client, no legacy sessions to cap.
      const { send, warnings } = await endpoint(transport, {
        maxStreamsPerClient: Number.POSITIVE_INFINITY,
        legacy: false,
      });
      expect((await call(send, "tools/list", {}, { headers: FORWARDED })).status).toBe(200);
      expect(warnings).toEqual([]);
    });

    it("should not be told when every caller is a principal, keyed by who it is", async () => {
      const { send, warnings } = await endpoint(transport, {
        rateLimit: { points: 100 },
        auth: bearerAuth({
          authorizationServers: ["https://auth.example.com"],
          verify: (token) => ({ issuer: "https://auth.example.com", subject: token, scopes: [] }),
        }),
      });
      const alice = withBearer(send, "alice");
      expect((await call(alice, "tools/list", {}, { headers: FORWARDED })).status).toBe(200);
      expect(warnings).toEqual([]);
    });
  },
);
