import { once } from "node:events";
import {
  Agent,
  createServer,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from "node:http";
import type { AddressInfo } from "node:net";
import { gzipSync } from "node:zlib";
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

  let elsewhere: Server;
  let other: string;
  const otherSeen: string[] = [];

  beforeAll(async () => {
    elsewhere = createServer((req, res) => {
      let body = "";
      req.setEncoding("utf8").on("data", (chunk: string) => (body += chunk));
      req.on("end", () => {
        otherSeen.push(`${req.method} ${req.url} ${body} ${req.headers.authorization ?? "-"}`);
        res.end("far");
      });
    });
    elsewhere.listen(0, "localhost");
    await once(elsewhere, "listening");
    other = `http://localhost:${(elsewhere.address() as AddressInfo).port}`;
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
    elsewhere.closeAllConnections();
    elsewhere.close();
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
    // An already aborted signal sends nothing at all: the next request is the only new connection.
    const before = connections;
    await expect(nodeFetch()(`${base}/`, { signal: controller.signal })).rejects.toBe(reason);
    route = (_req, res) => res.end("ok");
    expect(await (await nodeFetch()(`${base}/`)).text()).toBe("ok");
    expect(connections).toBe(before + 1);
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

  it("should send a redirected request once, then follow it as fetch does", async () => {
    const seen: string[] = [];
    route = (req, res, body) => {
      seen.push(`${req.method} ${req.url} ${body} ${req.headers.authorization ?? "-"}`);
      if (req.url === "/keep") res.writeHead(307, { location: "/new" }).end();
      else if (req.url === "/see") res.writeHead(303, { location: "/new" }).end();
      else if (req.url === "/away") res.writeHead(308, { location: `${other}/far` }).end();
      else res.end(`at ${req.url}`);
    };
    const fallback = vi.fn((input: Parameters<typeof fetch>[0], init?: RequestInit) =>
      fetch(input, init),
    );
    const fetcher = nodeFetch({ fallback });
    const post = (path: string) =>
      fetcher(`${base}${path}`, {
        method: "POST",
        body: "x",
        headers: { authorization: "Bearer t", "content-type": "text/plain" },
      });
    expect(await (await post("/keep")).text()).toBe("at /new");
    expect(await (await post("/see")).text()).toBe("at /new");
    expect(seen.splice(0)).toEqual([
      "POST /keep x Bearer t",
      "POST /new x Bearer t",
      "POST /see x Bearer t",
      "GET /new  Bearer t",
    ]);
    // To another origin: the method and body kept (308), the credentials not.
    expect(await (await post("/away")).text()).toBe("far");
    expect(seen.splice(0)).toEqual(["POST /away x Bearer t"]);
    expect(otherSeen.splice(0)).toEqual(["POST /far x -"]);
    expect(fallback).toHaveBeenCalledTimes(3);
    // A redirect asked for by hand is returned as it came; one refused rejects.
    const manual = await fetcher(`${base}/keep`, { redirect: "manual" });
    expect([manual.status, manual.headers.get("location")]).toEqual([307, "/new"]);
    await expect(fetcher(`${base}/keep`, { redirect: "error" })).rejects.toThrow(TypeError);
    expect(fallback).toHaveBeenCalledTimes(3);
  });

  it("should hand a Request object and a request for compression to the fallback", async () => {
    route = (req, res) => res.end(`at ${req.url}`);
    const fallback = vi.fn((input: Parameters<typeof fetch>[0], init?: RequestInit) =>
      fetch(input, init),
    );
    const fetcher = nodeFetch({ fallback });
    expect(await (await fetcher(new Request(`${base}/req`))).text()).toBe("at /req");
    const gzip = { headers: { "accept-encoding": "gzip" } };
    expect(await (await fetcher(`${base}/zip`, gzip)).text()).toBe("at /zip");
    expect(fallback).toHaveBeenCalledTimes(2);
  });

  it("should decode a compressed answer, as fetch does", async () => {
    route = (_req, res) => {
      res.writeHead(200, { "content-encoding": "gzip", "content-type": "application/json" });
      res.end(gzipSync('{"ok":true}'));
    };
    expect(await (await nodeFetch()(`${base}/`)).json()).toEqual({ ok: true });
  });

  it("should reject a header fetch refuses, rather than throw", async () => {
    const answer = nodeFetch()(`${base}/`, { headers: { "bad header": "x" } });
    expect(answer).toBeInstanceOf(Promise);
    await expect(answer).rejects.toThrow(TypeError);
  });

  it("should let an idle connection go after a few seconds", async () => {
    route = (_req, res) => res.end("ok");
    const agent = new Agent({ keepAlive: true, timeout: 200 });
    await (await nodeFetch({ httpAgent: agent })(`${base}/`)).text();
    await expect.poll(() => Object.keys(agent.freeSockets).length).toBe(1);
    await expect.poll(() => Object.keys(agent.freeSockets).length, { timeout: 2_000 }).toBe(0);
    agent.destroy();
  });

  it("should give 204, 205 and HEAD answers no body", async () => {
    route = (req, res) => {
      if (req.method === "HEAD") res.writeHead(200, { "content-length": "5" }).end();
      else res.writeHead(req.url === "/reset" ? 205 : 204).end();
    };
    const fetch = nodeFetch();
    const empty = await fetch(`${base}/`, { method: "DELETE" });
    expect([empty.status, empty.body]).toEqual([204, null]);
    const reset = await fetch(`${base}/reset`, { method: "POST", body: "x" });
    expect([reset.status, reset.body]).toEqual([205, null]);
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
