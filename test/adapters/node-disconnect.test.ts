import { once } from "node:events";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { type AddressInfo, connect, type Socket } from "node:net";
import express from "express";
import { afterEach, describe, expect, it } from "vitest";
import { toExpress } from "../../src/adapters/express.js";
import { toNodeHandler } from "../../src/adapters/node.js";
import { createMcpHandler, type McpHandler, McpServer } from "../../src/index.js";
import { modernHeaders, modernMeta } from "../helpers/modern.js";
import { assertModernMessage } from "../helpers/spec.js";

// The Node adapters tell a request its client has left through the connection, not through a
// listener on every response (see watchConnection in src/adapters/node-request.ts): a client that leaves
// mid-call aborts that call, one that leaves mid-body ends the read, and calls already answered
// on a kept-alive connection are not aborted when it closes later.

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

function rawCall(id: number, quick: boolean): string {
  const body = JSON.stringify({
    jsonrpc: "2.0",
    id,
    method: "tools/call",
    params: { name: "wait", arguments: { quick }, _meta: modernMeta() },
  });
  const headers = Object.entries(modernHeaders("tools/call", "wait"))
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join("");
  return `POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\n${headers}content-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
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

  async function start(probe: Probe): Promise<number> {
    mcp = counted(createMcpHandler(createWaitingServer(probe)), probe);
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
});
