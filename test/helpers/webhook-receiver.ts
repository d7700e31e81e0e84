import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Webhook } from "standardwebhooks";

/** One POST a receiver got: its headers and raw body. */
export interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  /** The parsed body. */
  json: Record<string, unknown>;
}

/** What a receiver answers: a status and a body (an object is sent as JSON). */
export interface Answer {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

/** How a receiver answers each POST; by default it echoes challenges and takes the rest (200). */
export type Responder = (request: Received, index: number) => Answer;

/** A webhook endpoint on 127.0.0.1: every POST it got, in order, and how it answers. */
export interface WebhookReceiver {
  /** `http://127.0.0.1:<port>/hooks`. */
  url: string;
  port: number;
  received: Received[];
  /** The POSTs that were not verification envelopes. */
  deliveries(): Received[];
  respond: Responder;
  /** How long it takes before answering each POST, in milliseconds (0: at once). */
  delayMs: number;
  close(): Promise<void>;
}

/** Echoes a verification challenge, takes every other body with 200. */
export const echoing: Responder = (request) =>
  request.json.type === "verification"
    ? { status: 200, body: { challenge: request.json.challenge } }
    : { status: 200 };

/** A receiver on 127.0.0.1 (port 0), answering with `respond` (changeable later). */
export async function startReceiver(respond: Responder = echoing): Promise<WebhookReceiver> {
  const received: Received[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      let json: Record<string, unknown> = {};
      try {
        json = JSON.parse(body) as Record<string, unknown>;
      } catch {}
      const request = { headers: req.headers, body, json };
      received.push(request);
      const answer = receiver.respond(request, received.length - 1);
      const text =
        answer.body === undefined
          ? ""
          : typeof answer.body === "string"
            ? answer.body
            : JSON.stringify(answer.body);
      setTimeout(() => {
        res.writeHead(answer.status, { "content-type": "application/json", ...answer.headers });
        res.end(text);
      }, receiver.delayMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  const receiver: WebhookReceiver = {
    url: `http://127.0.0.1:${port}/hooks`,
    port,
    received,
    deliveries: () => received.filter((request) => request.json.type !== "verification"),
    respond,
    delayMs: 0,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return receiver;
}

/** A fresh Standard Webhooks secret: `whsec_` and base64 of 32 random bytes. */
export function newSecret(): string {
  return `whsec_${Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64")}`;
}

/** Verifies a received POST with the standardwebhooks package itself; throws when it fails. */
export function verifyWith(secret: string, request: Received): unknown {
  const headers: Record<string, string> = {};
  for (const name of ["webhook-id", "webhook-timestamp", "webhook-signature"]) {
    headers[name] = String(request.headers[name] ?? "");
  }
  return new Webhook(secret).verify(request.body, headers);
}
