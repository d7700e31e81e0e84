import { once } from "node:events";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { nodeFetch } from "../../src/client/node.js";
import { failOnUnhandled } from "../helpers/unhandled.js";

type Route = (req: IncomingMessage, res: ServerResponse, body: string) => void;

/** A node:http server whose answer each test sets, counting the connections it accepts. */
describe("nodeFetch, as fetch", () => {
  let server: Server;
  let base: string;
  let route: Route;
  let connections = 0;
  const held = new Set<ServerResponse>();
  failOnUnhandled();

  beforeAll(async () => {
    server = createServer((req, res) => {
      let body = "";
      req.setEncoding("utf8").on("data", (chunk: string) => (body += chunk));
      req.on("end", () => route(req, res, body));
    });
    server.on("connection", () => connections++);
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    for (const res of held) res.destroy();
    server.closeAllConnections();
    server.close();
    await once(server, "close");
  });

  it("should send the method, headers and body, and read status, headers and body", async () => {
    route = (req, res, body) => {
      res.setHeader("set-cookie", ["a=1", "b=2"]);
      res.writeHead(201, "Made", { "content-type": "application/json" });
      res.end(JSON.stringify({ method: req.method, headers: req.headers, body }));
    };
    const response = await nodeFetch()(`${base}/mcp`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-one": "1" },
      body: '{"jsonrpc":"2.0"}',
    });
    expect(response.status).toBe(201);
    expect(response.statusText).toBe("Made");
    expect(response.ok).toBe(true);
    expect(response.headers.getSetCookie()).toEqual(["a=1", "b=2"]);
    const seen = await response.json();
    expect(seen).toMatchObject({
      method: "POST",
      body: '{"jsonrpc":"2.0"}',
      headers: { "content-type": "application/json", "x-one": "1", "content-length": "17" },
    });
    // A body of known length goes out with its length, never chunked.
    expect(seen.headers["transfer-encoding"]).toBeUndefined();
  });

  it("should send byte bodies and reuse one connection for calls one after another", async () => {
    route = (_req, res, body) => res.end(body);
    const fetch = nodeFetch();
    const before = connections;
    for (let i = 0; i < 5; i++) {
      const response = await fetch(`${base}/`, {
        method: "POST",
        body: new TextEncoder().encode(`call ${i}`),
      });
      expect(await response.text()).toBe(`call ${i}`);
    }
    expect(connections - before).toBe(1);
  });

  it("should stream a body of unknown length and end it with the signal's reason on abort", async () => {
    route = (_req, res) => {
      held.add(res);
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write("data: first\n\n");
    };
    const controller = new AbortController();
    const response = await nodeFetch()(`${base}/`, { signal: controller.signal });
    const reader = response.body!.getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toBe("data: first\n\n");
    const reason = new Error("the caller left");
    controller.abort(reason);
    await expect(reader.read()).rejects.toBe(reason);
  });

  it("should reject with the signal's reason when aborted before the answer", async () => {
    let asked!: () => void;
    const seen = new Promise<void>((resolve) => (asked = resolve));
    route = (_req, res) => {
      held.add(res);
      asked();
    };
    const controller = new AbortController();
    const answer = nodeFetch()(`${base}/`, { signal: controller.signal });
    await seen;
    const reason = new Error("too slow");
    controller.abort(reason);
    await expect(answer).rejects.toBe(reason);
    // An already aborted signal sends nothing at all.
    const before = connections;
    await expect(nodeFetch()(`${base}/`, { signal: controller.signal })).rejects.toBe(reason);
    expect(connections).toBe(before);
  });

  it("should reject with a TypeError when nothing listens, as fetch does", async () => {
    const closed = createServer();
    closed.listen(0, "127.0.0.1");
    await once(closed, "listening");
    const port = (closed.address() as AddressInfo).port;
    closed.close();
    await once(closed, "close");
    const failure = await nodeFetch()(`http://127.0.0.1:${port}/`).catch((error) => error);
    expect(failure).toBeInstanceOf(TypeError);
    expect(failure.message).toBe("fetch failed");
    expect(failure.cause).toMatchObject({ code: "ECONNREFUSED" });
  });

  it("should hand a redirect, a Request object and other protocols to the fallback", async () => {
    route = (req, res) => {
      if (req.url === "/old") res.writeHead(307, { location: "/new" }).end();
      else res.end(`at ${req.url}`);
    };
    const fallback = vi.fn((input: Parameters<typeof fetch>[0], init?: RequestInit) =>
      fetch(input, init),
    );
    const fetcher = nodeFetch({ fallback });
    const followed = await fetcher(`${base}/old`, { method: "POST", body: "x" });
    expect(await followed.text()).toBe("at /new");
    expect(fallback).toHaveBeenCalledTimes(1);
    expect(await (await fetcher(new Request(`${base}/req`))).text()).toBe("at /req");
    expect(fallback).toHaveBeenCalledTimes(2);
    // A redirect asked for by hand is returned as it came.
    const manual = await fetcher(`${base}/old`, { redirect: "manual" });
    expect(manual.status).toBe(307);
    expect(manual.headers.get("location")).toBe("/new");
    expect(fallback).toHaveBeenCalledTimes(2);
  });

  it("should give 204 and HEAD answers no body", async () => {
    route = (req, res) => {
      if (req.method === "HEAD") res.writeHead(200, { "content-length": "5" }).end();
      else res.writeHead(204).end();
    };
    const fetch = nodeFetch();
    const empty = await fetch(`${base}/`, { method: "DELETE" });
    expect([empty.status, empty.body]).toEqual([204, null]);
    const head = await fetch(`${base}/`, { method: "HEAD" });
    expect([head.status, head.body, head.headers.get("content-length")]).toEqual([200, null, "5"]);
  });

  it("should reject an answer cut short before its length", async () => {
    route = (_req, res) => {
      res.writeHead(200, { "content-length": "100" });
      res.write("only part");
      setImmediate(() => res.destroy());
    };
    const failure = await nodeFetch()(`${base}/`).catch((error) => error);
    expect(failure).toBeInstanceOf(TypeError);
  });
});
