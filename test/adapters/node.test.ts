import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { connect } from "node:net";
import express from "express";
import { describe, expect, it } from "vitest";
import { toNodeHandler } from "../../src/adapters/node.js";
import { createMcpHandler, McpServer } from "../../src/index.js";
import { call, modernHeaders, modernMeta, viaUrl } from "../helpers/modern.js";

describe("toNodeHandler", () => {
  it("should read a body that starts with a UTF-8 byte-order mark, as fetch's reader does", async () => {
    const server = new McpServer({ name: "bom", version: "1.0.0" });
    server.tool({ name: "echo", input: { type: "object" } }, () => "read");
    const mcp = createMcpHandler(server, { secret: "s" });
    const http = createServer(toNodeHandler(mcp));
    await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
    try {
      const url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`;
      const json = JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "tools/call",
        params: { name: "echo", arguments: {}, _meta: modernMeta() },
      });
      const body = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(json)]);
      const response = await fetch(url, {
        method: "POST",
        headers: modernHeaders("tools/call", "echo"),
        body,
      });
      expect(response.status).toBe(200);
      expect(await response.json()).toMatchObject({
        id: 1,
        result: { content: [{ text: "read" }] },
      });
    } finally {
      await mcp.close();
      http.closeAllConnections();
      http.close();
    }
  });

  it("should take a body a parser read from a request that has no complete flag", async () => {
    // As under a test injector (light-my-request) or an older Deno: the stream is read to its
    // end and req.body set, but the request object does not say it is complete.
    const server = new McpServer({ name: "parsed", version: "1.0.0" });
    server.tool({ name: "echo", input: { type: "object" } }, ({ text }) => String(text));
    const mcp = createMcpHandler(server, { secret: "s" });
    const handle = toNodeHandler(mcp);
    const parser = express.json();
    const http = createServer((req, res) => {
      parser(req as express.Request, res as express.Response, () => {
        // Without the flag while the adapter reads the body (at once, in handle); given back
        // after, since Node's own IncomingMessage reads it when the request is destroyed.
        Object.defineProperty(req, "complete", { value: undefined, writable: true });
        void handle(req, res);
        req.complete = true;
      });
    });
    await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
    try {
      const url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`;
      const response = await fetch(url, {
        method: "POST",
        headers: modernHeaders("tools/call", "echo"),
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "tools/call",
          params: { name: "echo", arguments: { text: "parsed" }, _meta: modernMeta() },
        }),
        signal: AbortSignal.timeout(10_000),
      });
      expect(response.status).toBe(200);
      expect(await response.json()).toMatchObject({ result: { content: [{ text: "parsed" }] } });
    } finally {
      await mcp.close();
      http.closeAllConnections();
      http.close();
    }
  });

  it("should serve /mcp ahead of an Express app on one server, the app's routes untouched", async () => {
    const server = new McpServer({ name: "ahead", version: "1.0.0" });
    server.tool({ name: "echo", input: { type: "object" } }, () => "from mcp");
    const mcp = createMcpHandler(server, { secret: "s" });
    const app = express();
    app.get("/health", (_req, res) => {
      res.send("ok");
    });
    // Express must never see the endpoint: it would answer 418.
    app.use("/mcp", (_req, res) => {
      res.status(418).end();
    });
    // The README's recipe, where Express's per-request cost is not wanted on the endpoint.
    const mcpHandler = toNodeHandler(mcp);
    const http = createServer((req, res) =>
      req.url === "/mcp" || req.url?.startsWith("/mcp?") ? mcpHandler(req, res) : app(req, res),
    );
    await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
    try {
      const origin = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
      for (const path of ["/mcp", "/mcp?from=test"]) {
        const { result } = await call(viaUrl(`${origin}${path}`), "tools/call", {
          name: "echo",
          arguments: {},
        });
        expect(result.content).toEqual([{ type: "text", text: "from mcp" }]);
      }
      const health = await fetch(`${origin}/health`);
      expect(await health.text()).toBe("ok");
      expect((await fetch(`${origin}/mcp/deeper`)).status).toBe(418);
    } finally {
      await mcp.close();
      http.closeAllConnections();
      http.close();
    }
  });

  it("should stop buffering for a reader that stops reading, and drop its stream", async () => {
    const server = new McpServer({ name: "backpressure", version: "1.0.0" });
    const mcp = createMcpHandler(server, { secret: "s" });
    const http = createServer(toNodeHandler(mcp));
    await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
    const { port } = http.address() as AddressInfo;
    const uri = `test://${"x".repeat(1_000)}`;
    const body = JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "subscriptions/listen",
      params: { notifications: { resourceSubscriptions: [uri] }, _meta: modernMeta() },
    });
    // A raw client that sends the request and then never reads: the kernel buffers fill up.
    const socket = connect(port, "127.0.0.1");
    await new Promise<void>((resolve) => socket.once("connect", resolve));
    const headers = {
      ...modernHeaders("subscriptions/listen"),
      host: `127.0.0.1:${port}`,
      "content-length": String(Buffer.byteLength(body)),
    };
    socket.write(
      `POST /mcp HTTP/1.1\r\n${Object.entries(headers)
        .map(([k, v]) => `${k}: ${v}`)
        .join("\r\n")}\r\n\r\n${body}`,
    );
    socket.pause();
    await expect.poll(() => mcp.stats().streams).toBe(1);
    // About 40 MB of notifications, far beyond the 4 MiB a stream may hold unread.
    for (let i = 0; i < 40_000 && mcp.stats().streams > 0; i++) {
      server.notifyResourceUpdated(uri);
      if (i % 500 === 0) await new Promise((r) => setImmediate(r));
    }
    // Dropped once its unread backlog passed the bound, rather than buffered without limit.
    await expect.poll(() => mcp.stats().streams, { timeout: 2_000 }).toBe(0);
    socket.destroy();
    await mcp.close();
    http.closeAllConnections();
    http.close();
  });
});
