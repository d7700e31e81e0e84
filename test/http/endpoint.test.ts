import { afterAll, describe, expect, it } from "vitest";
import { jwtAuth } from "../../src/auth/index.js";
import { createMcpHandler, type McpHandlerOptions, McpServer } from "../../src/index.js";
import { createFixtureServer } from "../helpers/fixture-server.js";
import { readExchange } from "../helpers/modern.js";
import { type Mounted, mount, TRANSPORTS } from "../helpers/transports.js";

const BROWSER_ACCEPT = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8";

describe.each(TRANSPORTS)("what the endpoint says of itself (%s)", (transport) => {
  const mounts: Mounted[] = [];
  async function mounted(options: McpHandlerOptions, server = createFixtureServer()) {
    const it = await mount(transport, createMcpHandler(server, { secret: "s", ...options }));
    mounts.push(it);
    return it;
  }
  afterAll(async () => {
    await Promise.all(mounts.map((it) => it.close()));
  });

  it.each([
    ["with legacy sessions", {}, "GET, POST, DELETE"],
    ["with stateless legacy", { legacy: { stateless: true } }, "POST"],
    ["modern only", { legacy: false }, "POST"],
  ] as const)(
    "should list every method it serves in Allow on a 405, %s",
    async (_what, options, allow) => {
      const { send } = await mounted(options);
      const response = await send({
        method: "PUT",
        headers: { "content-type": "application/json" },
      });
      const { status, error, headers } = readExchange(response, "PUT");
      expect(status).toBe(405);
      expect(headers.get("allow")).toBe(allow);
      expect(error?.code).toBe(-32600);
    },
  );

  it("should show a browser a short page saying what the endpoint is and how to connect", async () => {
    const server = new McpServer({ name: "notes", title: "Notes <&> Co", version: "1.0.0" });
    const { send, url } = await mounted({}, server);
    const response = await send({ method: "GET", headers: { accept: BROWSER_ACCEPT } });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(response.headers.get("allow")).toBe("GET, POST, DELETE");
    expect(response.headers.get("content-security-policy")).toContain("default-src 'none'");
    expect(response.text).toContain("Model Context Protocol endpoint");
    expect(response.text).toContain("Notes &lt;&amp;&gt; Co");
    expect(response.text).toContain(`npx mcp-mount inspect ${url}`);
  });

  it("should not name the server on that page when the endpoint is behind auth", async () => {
    const { send } = await mounted({
      auth: jwtAuth({ issuer: "https://auth.example.com", secret: "k".repeat(32) }),
    });
    const response = await send({ method: "GET", headers: { accept: BROWSER_ACCEPT } });
    expect(response.status).toBe(200);
    expect(response.text).toContain("Model Context Protocol endpoint");
    expect(response.text).not.toContain("fixture");
  });

  it("should still answer an MCP client's GET as MCP: 400 without a session", async () => {
    const { send } = await mounted({});
    const response = await send({
      method: "GET",
      headers: { accept: "text/event-stream, text/html" },
    });
    const { status, error } = readExchange(response, "GET");
    expect(status).toBe(400);
    expect(error?.message).toBe("Mcp-Session-Id header is required");
  });
});
