import { request as httpRequest } from "node:http";
import { connect, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DRAIN_MAX_BYTES } from "../../src/adapters/node-drain.js";
import { createMcpHandler } from "../../src/index.js";
import { createFixtureServer } from "../helpers/fixture-server.js";
import { call, modernHeaders, viaUrl } from "../helpers/modern.js";
import { assertModernMessage } from "../helpers/spec.js";
import { type Mounted, mount } from "../helpers/transports.js";

const MB = 1024 * 1024;
const LIMIT = 4 * MB;
const ROUNDS = 20;
const HEADERS = modernHeaders("tools/call", "echo");

/** What a client made of one upload: the status and body, or the error it got instead. */
type Outcome = { status: number; text: string } | { error: string };

/** Passes when `outcome` is the 413 with its JSON-RPC error naming the limit. */
function expectRefusal(outcome: Outcome): void {
  expect(outcome).toMatchObject({ status: 413 });
  const message = JSON.parse((outcome as { text: string }).text);
  assertModernMessage(message, "tools/call");
  expect(message.error.code).toBe(-32600);
  expect(message.error.message).toContain(String(LIMIT));
}

function describeError(error: unknown): string {
  const { code, cause } = error as { code?: string; cause?: { code?: string } };
  return cause?.code ?? code ?? String(error);
}

/** The body as 1 MiB chunks of a stream, which fetch sends chunked (no Content-Length). */
function chunkedStream(body: Buffer): ReadableStream<Uint8Array> {
  let offset = 0;
  return new ReadableStream({
    pull(controller) {
      if (offset >= body.length) return controller.close();
      controller.enqueue(body.subarray(offset, offset + MB));
      offset += MB;
    },
  });
}

async function viaFetch(url: string, body: Buffer, chunked: boolean): Promise<Outcome> {
  try {
    const response = await fetch(url, {
      method: "POST",
      headers: HEADERS,
      body: chunked ? chunkedStream(body) : body,
      duplex: "half",
    } as RequestInit);
    return { status: response.status, text: await response.text() };
  } catch (error) {
    return { error: describeError(error) };
  }
}

/** `node:http`: one `end(body)` declares its Content-Length; several writes go chunked. */
function viaHttpRequest(url: string, body: Buffer, chunked: boolean): Promise<Outcome> {
  return new Promise((resolve) => {
    const req = httpRequest(url, { method: "POST", headers: HEADERS }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => (text += chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, text }));
      res.on("error", (error) => resolve({ error: describeError(error) }));
    });
    req.on("error", (error) => resolve({ error: describeError(error) }));
    if (!chunked) return void req.end(body);
    for (let offset = 0; offset < body.length; offset += MB)
      req.write(body.subarray(offset, offset + MB));
    req.end();
  });
}

/** A raw connection: what it read, whether it saw an error, and how much it managed to send. */
interface RawUpload {
  received: string;
  error?: string;
  sent: number;
}

/**
 * Writes a POST head, then the body that `writeBody` sends, honouring backpressure; resolves
 * once the connection has closed. `readWhileSending: false` reads nothing until the body is out,
 * as simple clients do.
 */
function rawUpload(
  url: string,
  head: Record<string, string>,
  writeBody: (socket: Socket, count: (bytes: number) => void) => Promise<void>,
  readWhileSending = true,
): Promise<RawUpload> {
  const { hostname, port, pathname } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname);
    const upload: RawUpload = { received: "", sent: 0 };
    if (!readWhileSending) socket.pause();
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => (upload.received += chunk));
    socket.on("error", (error) => (upload.error ??= describeError(error)));
    socket.once("close", () => resolve(upload));
    const headers = { ...HEADERS, host: `${hostname}:${port}`, ...head };
    const lines = Object.entries(headers).map(([name, value]) => `${name}: ${value}`);
    socket.write(`POST ${pathname} HTTP/1.1\r\n${lines.join("\r\n")}\r\n\r\n`);
    writeBody(socket, (bytes) => (upload.sent += bytes))
      .catch(() => {})
      .finally(() => socket.resume());
  });
}

/** Writes `chunk` and waits for the socket to take more; rejects once the connection is gone. */
function write(socket: Socket, chunk: Buffer | string): Promise<void> {
  if (socket.destroyed) return Promise.reject(new Error("closed"));
  if (socket.write(chunk)) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const settle = () => {
      socket.off("drain", settle).off("close", settle);
      if (socket.destroyed) reject(new Error("closed"));
      else resolve();
    };
    socket.once("drain", settle).once("close", settle);
  });
}

/** The response a raw upload read, parsed: status line and body (de-chunked if need be). */
function rawOutcome(upload: RawUpload): Outcome {
  const status = /^HTTP\/1\.1 (\d{3})/.exec(upload.received)?.[1];
  if (!status) return { error: upload.error ?? "no response" };
  const [head = "", ...rest] = upload.received.split("\r\n\r\n");
  let text = rest.join("\r\n\r\n");
  if (/^transfer-encoding: chunked$/im.test(head)) {
    let decoded = "";
    for (let size = Number.parseInt(text, 16); size > 0; size = Number.parseInt(text, 16)) {
      const start = text.indexOf("\r\n") + 2;
      decoded += text.slice(start, start + size);
      text = text.slice(start + size + 2);
    }
    text = decoded;
  }
  return { status: Number(status), text };
}

const CHUNK = Buffer.alloc(64 * 1024, 0x20);

describe.each(["node", "express"] as const)("an oversized upload through %s", (transport) => {
  let mounted: Mounted;

  beforeAll(async () => {
    mounted = await mount(transport, createMcpHandler(createFixtureServer(), { secret: "s" }));
  });
  afterAll(() => mounted.close());

  describe.each([8, 40])("of %i MB", (megabytes) => {
    const body = Buffer.alloc(megabytes * MB, 0x20);

    it.each([
      ["fetch", "Content-Length", viaFetch, false],
      ["fetch", "chunked", viaFetch, true],
      ["http.request", "Content-Length", viaHttpRequest, false],
      ["http.request", "chunked", viaHttpRequest, true],
    ] as const)(
      "should reach %s (%s) as a 413 every time",
      async (_client, _framing, send, chunked) => {
        const outcomes: Outcome[] = [];
        for (let round = 0; round < ROUNDS; round++)
          outcomes.push(await send(mounted.url, body, chunked));
        const refused = outcomes.filter((outcome) => "status" in outcome && outcome.status === 413);
        expect(outcomes.filter((outcome) => !refused.includes(outcome))).toEqual([]);
        for (const outcome of refused) expectRefusal(outcome);
      },
    );

    it("should reach a client that sends the whole body before it reads", async () => {
      for (const chunked of [false, true]) {
        const upload = await rawUpload(
          mounted.url,
          chunked ? { "transfer-encoding": "chunked" } : { "content-length": String(body.length) },
          async (socket) => {
            for (let offset = 0; offset < body.length; offset += CHUNK.length) {
              const piece = body.subarray(offset, offset + CHUNK.length);
              await write(
                socket,
                chunked ? `${piece.length.toString(16)}\r\n${piece.toString()}\r\n` : piece,
              );
            }
            if (chunked) await write(socket, "0\r\n\r\n");
          },
          false,
        );
        expectRefusal(rawOutcome(upload));
      }
    });
  });

  it("should cut a client that keeps sending, once it has sent 64 MiB more", async () => {
    const upload = await rawUpload(
      mounted.url,
      { "transfer-encoding": "chunked" },
      async (socket, count) => {
        const piece = `${CHUNK.length.toString(16)}\r\n${CHUNK.toString()}\r\n`;
        for (;;) {
          await write(socket, piece);
          count(CHUNK.length);
        }
      },
    );
    expectRefusal(rawOutcome(upload));
    // Drained up to the bound rather than reset at once; the connection then closed anyway.
    expect(upload.sent).toBeGreaterThan(DRAIN_MAX_BYTES);
  });

  it("should cut a client that stops sending midway, after the drain's time bound", async () => {
    const upload = await rawUpload(
      mounted.url,
      { "content-length": String(100 * MB) },
      async (socket, count) => {
        await write(socket, CHUNK);
        count(CHUNK.length);
        // Then nothing more, and the connection is left open: the server closes it.
      },
    );
    expectRefusal(rawOutcome(upload));
  });

  it("should go on serving", async () => {
    const exchange = await call(viaUrl(mounted.url), "tools/call", {
      name: "echo",
      arguments: { text: "still here" },
    });
    expect(exchange.result.content).toEqual([{ type: "text", text: "still here" }]);
  });
});
