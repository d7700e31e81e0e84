import { once } from "node:events";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { type AddressInfo, connect, type Socket } from "node:net";
import express from "express";
import { afterEach, describe, expect, it } from "vitest";
import { toExpress } from "../../src/adapters/express.js";
import { fromNodeRequest, toNodeHandler, writeNodeResponse } from "../../src/adapters/node.js";
import {
  createMcpHandler,
  type McpHandler,
  type McpHandlerOptions,
  type McpHttpRequest,
  McpServer,
} from "../../src/index.js";
import { legacyHeaders, openSession } from "../helpers/legacy.js";
import { modernHeaders, modernMeta, viaUrl } from "../helpers/modern.js";
import { assertModernMessage } from "../helpers/spec.js";

// The Node adapters tell a request its client has left through the connection, not through a
// listener on every response (see NodeHttpRequest.watchConnection in src/adapters/node-request.ts):
// a client that leaves mid-call aborts that call, one that leaves mid-body ends the read, calls
// already answered on a kept-alive connection are not aborted when it closes later, and a stream
// Node queued behind a pipelined response (no socket, so no "close") still ends when it closes.

interface Probe {
  /** Each `wait` call's signal, in the order they started. */
  signals: AbortSignal[];
  /** Requests that reached the adapter. */
  started: number;
  /** Requests `mcp.handle` answered (or ended) after they reached the adapter. */
  settled: number;
}

function createWaitingServer(probe: Probe): McpServer {
  const server = new McpServer({ name: "disconnect", version: "1.0.0" });
  // Answers at once ("quick") or only once aborted ("wait"), sending nothing before: the request
  // answers with JSON, so no SSE stream is there to notice the client leaving.
  server.tool(
    { name: "wait", input: { type: "object", properties: { quick: { type: "boolean" } } } },
    async ({ quick }, ctx) => {
      probe.signals.push(ctx.signal);
      if (quick) return "quick";
      await new Promise<void>((resolve) => ctx.signal.addEventListener("abort", () => resolve()));
      return "aborted";
    },
  );
  // Sends a progress notification first, so its answer is an SSE stream, then waits to be aborted.
  server.tool({ name: "stream" }, async (_args, ctx) => {
    probe.signals.push(ctx.signal);
    await ctx.progress(1);
    await new Promise<void>((resolve) => ctx.signal.addEventListener("abort", () => resolve()));
    return "aborted";
  });
  return server;
}

const HOSTS = {
  node: (mcp: McpHandler, probe: Probe) => {
    const handle = toNodeHandler(mcp);
    return (req: IncomingMessage, res: ServerResponse) => {
      probe.started++;
      void handle(req, res);
    };
  },
  // The public pieces composed by hand, as a host with its own routing would.
  fromNodeRequest:
    (mcp: McpHandler, probe: Probe) => (req: IncomingMessage, res: ServerResponse) => {
      probe.started++;
      const request = fromNodeRequest(req, res);
      void mcp.handle(request).then((response) => writeNodeResponse(res, response, request));
    },
  express: (mcp: McpHandler, probe: Probe) => {
    const handle = toExpress(mcp);
    return express().use("/mcp", (req, res, next) => {
      probe.started++;
      handle(req, res, next);
    });
  },
};

/** Counts the requests `mcp.handle` is done with (the adapter looks it up on every request). */
function counted(mcp: McpHandler, probe: Probe): McpHandler {
  const handle = mcp.handle.bind(mcp);
  (mcp as { handle: McpHandler["handle"] }).handle = async (request) => {
    try {
      return await handle(request);
    } finally {
      probe.settled++;
    }
  };
  return mcp;
}

const POLL = { timeout: 5_000 };

/** A raw HTTP/1.1 POST of one modern request, for a keep-alive (or pipelining) connection. */
function rawPost(headers: Record<string, string>, message: Record<string, unknown>): string {
  const body = JSON.stringify(message);
  const lines = Object.entries(headers)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join("");
  return `POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\n${lines}content-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
}

function rawCall(id: number, quick: boolean): string {
  return rawPost(modernHeaders("tools/call", "wait"), {
    jsonrpc: "2.0",
    id,
    method: "tools/call",
    params: { name: "wait", arguments: { quick }, _meta: modernMeta() },
  });
}

/** A call of the "stream" tool, asking for progress: answered with an SSE stream. */
function rawStreamingCall(id: number): string {
  return rawPost(modernHeaders("tools/call", "stream"), {
    jsonrpc: "2.0",
    id,
    method: "tools/call",
    params: { name: "stream", arguments: {}, _meta: modernMeta({}, { progressToken: id }) },
  });
}

const LISTEN = { jsonrpc: "2.0", method: "subscriptions/listen" };
const LISTEN_PARAMS = { notifications: { toolsListChanged: true }, _meta: modernMeta() };

function rawListen(id: number): string {
  return rawPost(modernHeaders("subscriptions/listen"), { ...LISTEN, id, params: LISTEN_PARAMS });
}

/** Reads answers off a raw keep-alive connection, one JSON body at a time. */
class Connection {
  readonly socket: Socket;
  #buffered = "";
  #waiting: (() => void) | undefined;

  constructor(port: number) {
    this.socket = connect(port, "127.0.0.1");
    this.socket.setEncoding("utf8");
    // The tests close it themselves; a reset from the server fails the test that awaits it.
    this.socket.on("error", () => {});
    this.socket.on("data", (text: string) => {
      this.#buffered += text;
      this.#waiting?.();
    });
  }

  async answer(): Promise<{ status: number; message: Record<string, unknown> }> {
    for (;;) {
      const end = this.#buffered.indexOf("\r\n\r\n");
      const length = Number(/content-length: (\d+)/i.exec(this.#buffered.slice(0, end))?.[1]);
      if (end >= 0 && this.#buffered.length >= end + 4 + length) {
        const head = this.#buffered.slice(0, end);
        const body = this.#buffered.slice(end + 4, end + 4 + length);
        this.#buffered = this.#buffered.slice(end + 4 + length);
        return { status: Number(head.split(" ")[1]), message: JSON.parse(body) };
      }
      await new Promise<void>((resolve) => {
        this.#waiting = resolve;
      });
    }
  }

  async close(): Promise<void> {
    this.socket.destroy();
    await once(this.socket, "close");
  }
}

describe.each(Object.keys(HOSTS) as (keyof typeof HOSTS)[])("a client leaving (%s)", (host) => {
  let server: Server | undefined;
  let mcp: McpHandler | undefined;

  async function start(probe: Probe, options: McpHandlerOptions = {}): Promise<number> {
    mcp = counted(createMcpHandler(createWaitingServer(probe), options), probe);
    server = createServer(HOSTS[host](mcp, probe));
    await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
    return (server.address() as AddressInfo).port;
  }

  afterEach(async () => {
    await mcp?.close();
    server?.closeAllConnections();
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    server = undefined;
    mcp = undefined;
  });

  it("should abort a call running when its connection closes", async () => {
    const probe: Probe = { signals: [], started: 0, settled: 0 };
    const connection = new Connection(await start(probe));
    connection.socket.write(rawCall(1, false));
    await expect.poll(() => probe.signals.length, POLL).toBe(1);
    expect(probe.signals[0]!.aborted).toBe(false);
    await connection.close();
    await expect.poll(() => probe.signals[0]!.aborted, POLL).toBe(true);
    await expect.poll(() => probe.settled, POLL).toBe(1);
  });

  it("should not abort calls answered earlier on a kept-alive connection when it closes", async () => {
    const probe: Probe = { signals: [], started: 0, settled: 0 };
    const connection = new Connection(await start(probe));
    for (let id = 1; id <= 3; id++) {
      connection.socket.write(rawCall(id, true));
      const { status, message } = await connection.answer();
      expect(status).toBe(200);
      assertModernMessage(message, "tools/call");
      expect(message).toMatchObject({ id, result: { content: [{ text: "quick" }] } });
    }
    // The fourth is running when the connection closes: only it is aborted.
    connection.socket.write(rawCall(4, false));
    await expect.poll(() => probe.signals.length, POLL).toBe(4);
    await connection.close();
    await expect.poll(() => probe.signals[3]!.aborted, POLL).toBe(true);
    expect(probe.signals.slice(0, 3).map((signal) => signal.aborted)).toEqual([
      false,
      false,
      false,
    ]);
  });

  it("should end the read of a body whose client leaves before sending all of it", async () => {
    const probe: Probe = { signals: [], started: 0, settled: 0 };
    const connection = new Connection(await start(probe));
    const whole = rawCall(1, true);
    connection.socket.write(whole.slice(0, whole.length - 20));
    // The head and part of the body are in: the adapter is reading it.
    await expect.poll(() => probe.started, POLL).toBe(1);
    await connection.close();
    await expect.poll(() => probe.settled, POLL).toBe(1);
    expect(probe.signals).toEqual([]);
    // And the endpoint goes on serving.
    const next = new Connection((server!.address() as AddressInfo).port);
    next.socket.write(rawCall(2, true));
    const { status, message } = await next.answer();
    expect(status).toBe(200);
    expect(message).toMatchObject({ id: 2, result: { content: [{ text: "quick" }] } });
    await next.close();
  });

  // A pipelining client's second request is handled at once, but its response waits in Node's
  // queue for the first to end, with no socket: it never emits "close". Its stream must still
  // end when the connection does, or it runs (and holds its stream slot) for good.
  it("should cancel a streamed answer queued behind a pipelined request when the connection closes", async () => {
    const probe: Probe = { signals: [], started: 0, settled: 0 };
    const connection = new Connection(await start(probe));
    connection.socket.write(rawCall(1, false) + rawStreamingCall(2));
    await expect.poll(() => probe.signals.length, POLL).toBe(2);
    // The second has its answer (an SSE stream, queued); the first is still running.
    await expect.poll(() => probe.settled, POLL).toBe(1);
    await connection.close();
    await expect
      .poll(() => probe.signals.map((signal) => signal.aborted), POLL)
      .toEqual([true, true]);
    await expect.poll(() => probe.settled, POLL).toBe(2);
  });

  it("should give back the stream slot of a listen queued behind a pipelined request when the connection closes", async () => {
    const probe: Probe = { signals: [], started: 0, settled: 0 };
    const port = await start(probe, { maxStreams: 1 });
    const connection = new Connection(port);
    connection.socket.write(rawCall(1, false) + rawListen(2));
    await expect.poll(() => probe.settled, POLL).toBe(1);
    // The queued listen holds the only slot.
    const refused = await listenStatus(port);
    expect(refused).not.toBe(200);
    await connection.close();
    await expect.poll(() => listenStatus(port), POLL).toBe(200);
  });

  it("should give back the stream slot of a legacy GET stream queued behind a pipelined request when the connection closes", async () => {
    const probe: Probe = { signals: [], started: 0, settled: 0 };
    const port = await start(probe, { maxStreams: 1 });
    const sessionId = await openSession(viaUrl(`http://127.0.0.1:${port}/mcp`));
    const settledBefore = probe.settled;
    const connection = new Connection(port);
    const lines = Object.entries({ ...legacyHeaders(sessionId), accept: "text/event-stream" })
      .map(([name, value]) => `${name}: ${value}\r\n`)
      .join("");
    connection.socket.write(
      `${rawCall(1, false)}GET /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\n${lines}\r\n`,
    );
    await expect.poll(() => probe.settled - settledBefore, POLL).toBe(1);
    expect(await listenStatus(port)).not.toBe(200);
    await connection.close();
    await expect.poll(() => listenStatus(port), POLL).toBe(200);
  });
});

/** The status a new listen on its own connection gets; the stream is closed at once. */
async function listenStatus(port: number): Promise<number> {
  const controller = new AbortController();
  const response = await fetch(`http://127.0.0.1:${port}/mcp`, {
    method: "POST",
    headers: modernHeaders("subscriptions/listen"),
    body: JSON.stringify({ ...LISTEN, id: 9, params: LISTEN_PARAMS }),
    signal: controller.signal,
  });
  controller.abort();
  return response.status;
}

// A streamed body (what a legacy POST answered with SSE returns) queued behind a pipelined
// response: a handler that answers the first request only once its client leaves, and the
// second with a stream that stays open, empty or with more than Node buffers before "drain".
interface BodyProbe {
  handled: number;
  cancelled: number;
  /** Responses the host finished writing (or gave up on). */
  written: number;
}

function streamingStub(probe: BodyProbe, size: number): McpHandler {
  return {
    async handle(request: McpHttpRequest) {
      const body = await request.body(1 << 20);
      const { id } = JSON.parse(body.kind === "text" ? body.text : "{}") as { id: number };
      probe.handled++;
      if (id === 1) {
        await new Promise<void>((resolve) => request.onAbort!(resolve));
        return { status: 200, headers: { "content-type": "application/json" }, body: "{}" };
      }
      const stream = new ReadableStream<Uint8Array>({
        start(controller) {
          if (size > 0) controller.enqueue(new Uint8Array(size));
        },
        cancel() {
          probe.cancelled++;
        },
      });
      return { status: 200, headers: { "content-type": "text/event-stream" }, body: stream };
    },
  } as unknown as McpHandler;
}

const BODY_HOSTS = {
  node: (mcp: McpHandler, probe: BodyProbe) => {
    const handle = toNodeHandler(mcp);
    return (req: IncomingMessage, res: ServerResponse) =>
      void handle(req, res).then(() => probe.written++);
  },
  fromNodeRequest: (mcp: McpHandler, probe: BodyProbe) => {
    return (req: IncomingMessage, res: ServerResponse) => {
      const request = fromNodeRequest(req, res);
      void mcp
        .handle(request)
        .then((response) => writeNodeResponse(res, response, request))
        .then(() => probe.written++);
    };
  },
};

describe.each(Object.keys(BODY_HOSTS) as (keyof typeof BODY_HOSTS)[])(
  "a streamed body queued behind a pipelined response (%s)",
  (host) => {
    let server: Server | undefined;

    afterEach(async () => {
      server?.closeAllConnections();
      await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
      server = undefined;
    });

    it.each([
      ["nothing written yet", 0],
      ["64 KB waiting for drain", 64 * 1024],
    ])("should be cancelled and written off when the connection closes, %s", async (_, size) => {
      const probe: BodyProbe = { handled: 0, cancelled: 0, written: 0 };
      server = createServer(BODY_HOSTS[host](streamingStub(probe, size), probe));
      await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
      const connection = new Connection((server.address() as AddressInfo).port);
      const call = (id: number) =>
        rawPost(modernHeaders("tools/call", "stream"), {
          jsonrpc: "2.0",
          id,
          method: "tools/call",
          params: { name: "stream", arguments: {}, _meta: modernMeta() },
        });
      connection.socket.write(call(1) + call(2));
      await expect.poll(() => probe.handled, POLL).toBe(2);
      await connection.close();
      await expect.poll(() => probe.cancelled, POLL).toBe(1);
      await expect.poll(() => probe.written, POLL).toBe(2);
    });
  },
);
