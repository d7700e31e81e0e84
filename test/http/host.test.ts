import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import express from "express";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { toExpress } from "../../src/adapters/express.js";
import { toNodeHandler } from "../../src/adapters/node.js";
import { jwtAuth } from "../../src/auth/index.js";
import { createMcpHandler } from "../../src/index.js";
import { createFixtureServer } from "../helpers/fixture-server.js";
import { modernHeaders, modernMeta } from "../helpers/modern.js";
import { type Mounted, mount } from "../helpers/transports.js";

/** A raw request, so the Host header can be forged as a DNS-rebinding page would. */
function post(
  url: string,
  headers: Record<string, string>,
): Promise<{ status: number; body: string; headers: Record<string, unknown> }> {
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
        res.on("end", () =>
          resolve({ status: res.statusCode ?? 0, body: text, headers: res.headers }),
        );
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

describe("IP literals on a loopback socket", () => {
  let mounted: Mounted;
  beforeAll(async () => {
    mounted = await mount("node", createMcpHandler(createFixtureServer(), { secret: "s" }));
  });
  afterAll(() => mounted.close());

  // A rebinding page sends the name it controls; an address typed by hand is no such page.
  it("should answer a Host that is an IP address, and still refuse a name", async () => {
    const port = new URL(mounted.url).port;
    for (const host of [`192.168.1.5:${port}`, `[fe80::1]:${port}`, "10.0.0.7"]) {
      expect((await post(mounted.url, { host })).status, host).toBe(200);
    }
    expect((await post(mounted.url, { host: `192.168.1.5.nip.io:${port}` })).status).toBe(403);
  });
});

describe.each(["node", "express"] as const)("behind a reverse proxy (%s)", (transport) => {
  let trusting: Mounted;
  let plain: Mounted;
  beforeAll(async () => {
    trusting = await mount(
      transport,
      createMcpHandler(createFixtureServer(), {
        secret: "s",
        trustProxy: true,
        allowedHosts: ["mcp.example.com"],
      }),
    );
    plain = await mount(transport, createMcpHandler(createFixtureServer(), { secret: "s" }));
  });
  afterAll(async () => {
    await trusting.close();
    await plain.close();
  });

  const forwarded = {
    "x-forwarded-host": "mcp.example.com",
    "x-forwarded-proto": "https",
    origin: "https://mcp.example.com",
  };

  it("should take the public host and protocol from a trusted proxy for the Host and Origin checks", async () => {
    const upstream = new URL(trusting.url).host;
    expect((await post(trusting.url, { host: upstream, ...forwarded })).status).toBe(200);
  });

  it("should refuse a forwarded host that is not among allowedHosts", async () => {
    const upstream = new URL(trusting.url).host;
    const response = await post(trusting.url, {
      host: upstream,
      ...forwarded,
      "x-forwarded-host": "evil.example.com",
      origin: "https://evil.example.com",
    });
    expect(response.status).toBe(403);
    expect(JSON.parse(response.body).error.message).toMatch(/^Host not allowed/);
  });

  it("should derive the auth resource URL, and so the metadata URL, from the forwarded host and protocol", async () => {
    const mcp = createMcpHandler(createFixtureServer(), {
      secret: "s",
      trustProxy: true,
      allowedHosts: ["mcp.example.com"],
      auth: jwtAuth({ issuer: "https://auth.example.com", secret: "k".repeat(32) }),
    });
    const behind = await mount(transport, mcp);
    try {
      const path = new URL(behind.url).pathname;
      const response = await post(behind.url, { host: new URL(behind.url).host, ...forwarded });
      expect(response.status).toBe(401);
      expect(response.headers["www-authenticate"]).toContain(
        `resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource${path}"`,
      );
    } finally {
      await behind.close();
    }
  });

  it("should ignore X-Forwarded-* headers unless trustProxy is set", async () => {
    const host = new URL(plain.url).host;
    const response = await post(plain.url, { host, ...forwarded });
    expect(response.status).toBe(403);
    expect(JSON.parse(response.body).error.message).toBe("Origin not allowed");
    // A forged forwarded host does not get past the Host check either.
    const forged = await post(plain.url, { host: "evil.example.com", ...forwarded });
    expect(forged.status).toBe(403);
    expect(JSON.parse(forged.body).error.message).toMatch(/^Host not allowed/);
  });
});

describe.each(["node", "express"] as const)(
  "a dual-stack socket reached on 127.0.0.2 (%s)",
  (transport) => {
    let server: Server;
    let url: string;
    beforeAll(async () => {
      const mcp = createMcpHandler(createFixtureServer(), { secret: "s" });
      const app = express();
      app.use("/mcp", toExpress(mcp));
      server = createServer(transport === "node" ? toNodeHandler(mcp) : app);
      // No host: Node's and Express's default, a dual-stack socket whose local address for a
      // connection to 127.0.0.2 is ::ffff:127.0.0.2.
      await new Promise<void>((resolve) => server.listen(0, resolve));
      url = `http://127.0.0.2:${(server.address() as AddressInfo).port}/mcp`;
    });
    afterAll(async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    });

    it("should refuse a rebound public Host name with 403, as on 127.0.0.1", async () => {
      const response = await post(url, { host: "evil.example.com" });
      expect(response.status).toBe(403);
      expect(JSON.parse(response.body).error.message).toMatch(/^Host not allowed/);
    });

    it("should answer a loopback Host name", async () => {
      const host = new URL(url).host;
      expect((await post(url, { host })).status).toBe(200);
      expect((await post(url, { host: `localhost:${new URL(url).port}` })).status).toBe(200);
    });
  },
);

describe.each(["node", "express"] as const)(
  "trustProxy on a loopback socket without allowedHosts (%s)",
  (transport) => {
    let mounted: Mounted;
    beforeAll(async () => {
      mounted = await mount(
        transport,
        createMcpHandler(createFixtureServer(), { secret: "s", trustProxy: true }),
      );
    });
    afterAll(() => mounted.close());

    it("should still refuse a rebound Host name on a direct connection", async () => {
      const response = await post(mounted.url, { host: "evil.example.com" });
      expect(response.status).toBe(403);
      expect(JSON.parse(response.body).error.message).toMatch(/^Host not allowed/);
    });

    it("should refuse a public name forwarded to it, which a rebinding page can send too", async () => {
      const response = await post(mounted.url, {
        host: "evil.example.com",
        "x-forwarded-host": "evil.example.com",
        origin: "http://evil.example.com",
      });
      expect(response.status).toBe(403);
      expect(JSON.parse(response.body).error.message).toMatch(/^Host not allowed/);
    });

    it("should answer loopback names, forwarded or not, and read the forwarded client address", async () => {
      const host = new URL(mounted.url).host;
      expect((await post(mounted.url, { host, "x-forwarded-for": "203.0.113.9" })).status).toBe(
        200,
      );
      const forwarded = { host: "evil.example.com", "x-forwarded-host": `localhost:3000` };
      expect((await post(mounted.url, forwarded)).status).toBe(200);
    });
  },
);
