import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createMcpHandler } from "../../src/index.js";
import { createFixtureServer } from "../helpers/fixture-server.js";
import { modernHeaders, modernMeta } from "../helpers/modern.js";
import { type Mounted, mount } from "../helpers/transports.js";

/** A raw request, so the Host header can be forged as a DNS-rebinding page would. */
function post(
  url: string,
  headers: Record<string, string>,
): Promise<{ status: number; body: string }> {
  const body = JSON.stringify({
    jsonrpc: "2.0",
    id: 1,
    method: "server/discover",
    params: { _meta: modernMeta() },
  });
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { method: "POST", headers: { ...modernHeaders("server/discover"), ...headers } },
      (res) => {
        let text = "";
        res.on("data", (chunk) => {
          text += chunk;
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text }));
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

describe("DNS rebinding protection on a loopback socket", () => {
  let mounted: Mounted;
  let configured: Mounted;
  beforeAll(async () => {
    mounted = await mount("node", createMcpHandler(createFixtureServer(), { secret: "s" }));
    configured = await mount(
      "node",
      createMcpHandler(createFixtureServer(), { secret: "s", allowedHosts: ["mcp.example.com"] }),
    );
  });
  afterAll(async () => {
    await mounted.close();
    await configured.close();
  });

  it("should refuse a rebound public Host name with 403", async () => {
    const response = await post(mounted.url, {
      host: "evil.example.com",
      origin: "http://evil.example.com",
    });
    expect(response.status).toBe(403);
    expect(JSON.parse(response.body).error.code).toBe(-32600);
  });

  it("should answer loopback Host names", async () => {
    const port = new URL(mounted.url).port;
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`]) {
      expect((await post(mounted.url, { host, origin: `http://${host}` })).status, host).toBe(200);
    }
  });

  it("should answer only the configured hosts when allowedHosts is set", async () => {
    expect((await post(configured.url, { host: "mcp.example.com" })).status).toBe(200);
    expect((await post(configured.url, { host: "evil.example.com" })).status).toBe(403);
  });
});
