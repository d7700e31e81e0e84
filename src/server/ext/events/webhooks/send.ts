import { lookup as dnsLookup } from "node:dns/promises";
import {
  type IncomingMessage,
  request as httpRequest,
  type RequestOptions,
  validateHeaderValue,
} from "node:http";
import { request as httpsRequest } from "node:https";
import { isIP, type LookupFunction } from "node:net";
import type { DeliveryErrorCategory } from "../../../../protocol/events.js";
import { type AddressPolicy, bareHost } from "./address.js";
import type { ResolvedAddress } from "./options.js";

/** Why a delivery failed: the only words a subscriber ever hears (SEP-3415, delivery status). */
export type FailureReason = DeliveryErrorCategory;

/** How one POST went. A refusal by the address policy never opened a connection. */
export type SendResult =
  | { ok: true; status: number; body: string }
  | { ok: false; reason: FailureReason; status?: number; refused?: true };

/** What the sender needs besides the request. */
export interface SendOptions {
  policy: AddressPolicy;
  connectTimeoutMs: number;
  timeoutMs: number;
  lookup?: (hostname: string) => Promise<ResolvedAddress[]>;
}

/** The largest body sent (SEP-3415, delivery profile: at or under 256 KiB). */
export const MAX_BODY_BYTES = 256 * 1024;
/** How much of a response is read: enough for a verification echo, never a whole page. */
const MAX_RESPONSE_BYTES = 4 * 1024;

/**
 * Whether a callback URL may be subscribed at all: `https:` (SEP-3415, TLS requirement), or
 * `http:` to a host on the operator's allow-list; no credentials, no fragment.
 */
export function isCallbackUrl(url: URL, policy: AddressPolicy): boolean {
  if (url.username || url.password || url.hash) return false;
  return url.protocol === "https:" || (url.protocol === "http:" && policy.allowsHost(url.hostname));
}

/**
 * POSTs `body` to a callback so that it cannot be turned against the network it runs in: the
 * host is resolved now (at delivery time, against DNS rebinding), every address it resolves to
 * must pass the policy, the connection goes to the checked address (the URL's hostname stays in
 * `Host` and TLS SNI), redirects are never followed, the response is read up to a few KiB, and
 * both the connection and the whole exchange have time limits.
 */
export async function postWebhook(
  url: URL,
  body: string,
  headers: Record<string, string>,
  options: SendOptions,
): Promise<SendResult> {
  if (!isCallbackUrl(url, options.policy))
    return { ok: false, reason: "connection_refused", refused: true };
  if (Buffer.byteLength(body) > MAX_BODY_BYTES)
    return { ok: false, reason: "http_4xx", status: 413 };
  // An eventId no header can carry (a line break, say) is never sent, rather than thrown.
  if (!Object.entries(headers).every(([name, value]) => isHeaderValue(name, value)))
    return { ok: false, reason: "connection_refused", refused: true };
  const started = Date.now();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expiry = new Promise<"timeout">((resolve) => {
    timer = setTimeout(() => resolve("timeout"), options.connectTimeoutMs);
  });
  let target: ResolvedAddress | undefined | "timeout";
  try {
    target = await Promise.race([checkedAddress(url.hostname, options), expiry]);
  } catch {
    return { ok: false, reason: "connection_refused" };
  } finally {
    clearTimeout(timer);
  }
  if (target === "timeout") return { ok: false, reason: "timeout" };
  if (!target) return { ok: false, reason: "connection_refused", refused: true };
  // The resolution counts against the whole exchange's time.
  const timeoutMs = Math.max(1, options.timeoutMs - (Date.now() - started));
  return exchange(url, body, headers, target, { ...options, timeoutMs });
}

/** The address to connect to: the first one resolved, once all of them passed the policy. */
async function checkedAddress(
  hostname: string,
  options: SendOptions,
): Promise<ResolvedAddress | undefined> {
  const host = bareHost(hostname);
  const family = isIP(host);
  const addresses: ResolvedAddress[] =
    family === 4 || family === 6
      ? [{ address: host, family }]
      : options.lookup
        ? await options.lookup(host)
        : ((await dnsLookup(host, { all: true, verbatim: true })) as ResolvedAddress[]);
  if (addresses.length === 0) return undefined;
  if (options.policy.allowsHost(host)) return addresses[0];
  return addresses.every(({ address }) => options.policy.allowsAddress(address))
    ? addresses[0]
    : undefined;
}

/** A lookup that answers only the checked address, however it is asked. */
function pinned(target: ResolvedAddress): LookupFunction {
  return (_hostname, lookupOptions, callback) => {
    if (lookupOptions.all) (callback as (e: null, a: ResolvedAddress[]) => void)(null, [target]);
    else callback(null, target.address, target.family);
  };
}

function exchange(
  url: URL,
  body: string,
  headers: Record<string, string>,
  target: ResolvedAddress,
  options: SendOptions,
): Promise<SendResult> {
  const requestOptions: RequestOptions = {
    method: "POST",
    headers: {
      ...headers,
      "content-type": "application/json",
      "content-length": String(Buffer.byteLength(body)),
      "user-agent": "mcp-mount",
    },
    lookup: pinned(target),
    agent: false,
    timeout: options.connectTimeoutMs,
  };
  const send = url.protocol === "https:" ? httpsRequest : httpRequest;
  return new Promise<SendResult>((resolve) => {
    let settled = false;
    const finish = (result: SendResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(total);
      request.destroy();
      resolve(result);
    };
    const total = setTimeout(() => finish({ ok: false, reason: "timeout" }), options.timeoutMs);
    const request = send(url, requestOptions, (response) => {
      readCapped(response).then(
        (text) => finish(outcome(response.statusCode ?? 0, text)),
        () => finish({ ok: false, reason: "connection_refused" }),
      );
    });
    // Fires while connecting: the socket's idle limit, lifted once connected.
    request.on("timeout", () => finish({ ok: false, reason: "timeout" }));
    request.on("socket", (socket) => {
      socket.once(url.protocol === "https:" ? "secureConnect" : "connect", () =>
        request.setTimeout(0),
      );
    });
    request.on("error", (error) => finish({ ok: false, reason: reasonOf(error) }));
    request.end(body);
  });
}

/** A response's status as a result: 2xx succeeds; 3xx (never followed) counts with 4xx. */
function outcome(status: number, body: string): SendResult {
  if (status >= 200 && status < 300) return { ok: true, status, body };
  return { ok: false, reason: status >= 500 ? "http_5xx" : "http_4xx", status };
}

/** Up to {@link MAX_RESPONSE_BYTES} of a response's body; the rest is never read. */
function readCapped(response: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = () => resolve(Buffer.concat(chunks).toString("utf8"));
    response.on("data", (chunk: Buffer) => {
      const room = MAX_RESPONSE_BYTES - size;
      chunks.push(chunk.subarray(0, Math.max(0, room)));
      size += chunk.length;
      if (size >= MAX_RESPONSE_BYTES) {
        response.removeAllListeners("end");
        done();
      }
    });
    response.on("end", done);
    response.on("error", reject);
  });
}

/** The category of a socket or TLS failure. */
function reasonOf(error: unknown): FailureReason {
  const code = String((error as { code?: unknown }).code ?? "");
  if (code === "ETIMEDOUT" || code === "ESOCKETTIMEDOUT") return "timeout";
  if (
    /^(ERR_TLS|ERR_SSL|CERT_|UNABLE_TO|DEPTH_ZERO|SELF_SIGNED|EPROTO|HOSTNAME_MISMATCH)/.test(
      code,
    ) ||
    code === "ERR_TLS_CERT_ALTNAME_INVALID"
  )
    return "tls_error";
  return "connection_refused";
}

function isHeaderValue(name: string, value: string): boolean {
  try {
    validateHeaderValue(name, value);
    return true;
  } catch {
    return false;
  }
}
