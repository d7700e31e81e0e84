import { MODERN_VERSION } from "../protocol/versions.js";
import { createTelemetry } from "../telemetry/telemetry.js";
import { isHttpRefusal, McpError } from "./errors.js";
import { HttpWire } from "./http-wire.js";
import { capabilitiesFor } from "./input.js";
import { InputRouter } from "./input-router.js";
import { LegacySession } from "./legacy-session.js";
import { isLegacyAnswer, ModernSession } from "./modern-session.js";
import { OAuthSession } from "./oauth/session.js";
import type { McpClientOptions } from "./options.js";
import type { Session, SessionConfig } from "./session.js";
import { sleep } from "./sse.js";
import { SseWire } from "./sse-wire.js";
import type { Era, Notification } from "./types.js";
import type { Wire } from "./wire.js";

/** How a client finds its server's era. */
export interface EraOptions {
  /** Force an era, or detect it. @default "auto" */
  era: Era | "auto";
  /** Where detected eras are remembered, by endpoint; `undefined` remembers nothing. */
  eraCache: Map<string, Era> | undefined;
  /**
   * How long a detecting stdio probe waits for `server/discover` before asking with `ping`
   * whether the server is up, and once it is, before taking it for a legacy server. Unused
   * when the era is forced.
   */
  probeTimeoutMs: number;
  /** Bounds opening the session, whatever the era. */
  signal?: AbortSignal;
}

/** Eras detected in this process, by HTTP endpoint (spec: versioning, backward compatibility). */
export const rememberedEras = new Map<string, Era>();

/** The key an HTTP endpoint's era is remembered under: origin and path. */
export function endpointKey(url: URL): string {
  return `${url.origin}${url.pathname}`;
}

async function openModern(
  wire: Wire,
  config: SessionConfig,
  signal: AbortSignal | undefined,
): Promise<Session> {
  const session = new ModernSession(wire, config, MODERN_VERSION);
  await session.open(signal);
  return session;
}

async function openLegacy(
  wire: Wire,
  config: SessionConfig,
  options: EraOptions,
): Promise<Session> {
  const session = new LegacySession(wire, config, "2025-11-25");
  await session.open(options.signal);
  return session;
}

/** The server is up (it answered `ping`) but leaves the modern probe unanswered. */
class ProbeIgnoredError extends Error {
  constructor() {
    super("server/discover went unanswered while the server answered ping");
    this.name = "ProbeIgnoredError";
  }
}

/**
 * The modern probe of era detection. HTTP answers it with a status. stdio has none: a legacy
 * server may leave the probe unanswered, but so does any server still starting, and a slow
 * start is no legacy server. So silence past `probeTimeoutMs` is put to a `ping`, which
 * servers answer before `initialize` too (spec 2025-11-25: basic/lifecycle): unanswered, the
 * server is still starting and the probe waits on; answered, the server has read the probe
 * (stdio keeps order) and gets as long again to answer it before it counts as ignored.
 */
async function probeModern(
  wire: Wire,
  config: SessionConfig,
  options: EraOptions,
): Promise<Session> {
  if (wire.kind === "http") return openModern(wire, config, options.signal);
  const session = new ModernSession(wire, config, MODERN_VERSION);
  const ignored = new AbortController();
  const settled = new AbortController();
  const probing = anySignal(options.signal, ignored.signal);
  void isIgnoring(session, options.probeTimeoutMs, anySignal(probing, settled.signal)).then(
    (ignoring) => ignoring && ignored.abort(new ProbeIgnoredError()),
  );
  try {
    await session.open(probing);
    return session;
  } finally {
    settled.abort();
  }
}

/** Whether a server stays silent on the probe after `ping` showed it up; false once aborted. */
async function isIgnoring(session: Session, ms: number, signal: AbortSignal): Promise<boolean> {
  try {
    await sleep(ms, signal);
    // Any answer counts, an error too: the server is up.
    await session.request("ping", {}, { signal }).catch((error: unknown) => {
      if (!(error instanceof McpError)) throw error;
    });
    await sleep(ms, signal);
    return true;
  } catch {
    return false;
  }
}

function anySignal(...signals: (AbortSignal | undefined)[]): AbortSignal {
  return AbortSignal.any(signals.filter((s): s is AbortSignal => s !== undefined));
}

/** Detection tried both eras: the error says what each answered, and carries the last. */
function neitherEra(probe: unknown, error: unknown): Error {
  const why = (e: unknown) => (e instanceof Error ? e.message : String(e));
  const message =
    why(probe) === why(error)
      ? `server/discover and initialize both failed (${why(error)})`
      : `server/discover failed (${why(probe)}), then initialize failed (${why(error)})`;
  return new Error(`No era answered: ${message}`, { cause: error });
}

/**
 * Opens a session in the server's era: the one forced or remembered, else a modern probe
 * first and `initialize` when the answer is not a modern one. A remembered era that fails is
 * forgotten and detected again. A forced era is opened at once, bounded by `signal` alone:
 * the probe's wait belongs to detection.
 */
export async function openSession(
  wire: Wire,
  config: SessionConfig,
  options: EraOptions,
): Promise<Session> {
  if (options.era === "modern") return openModern(wire, config, options.signal);
  if (options.era === "legacy") return openLegacyOrSse(wire, config, options);
  const key = wire instanceof HttpWire ? endpointKey(wire.url) : undefined;
  const remembered = key ? options.eraCache?.get(key) : undefined;
  if (remembered === "legacy") {
    try {
      return await openLegacy(wire, config, options);
    } catch {
      options.eraCache?.delete(key!);
    }
  }
  let session: Session;
  try {
    session = await probeModern(wire, config, options);
  } catch (probe) {
    if (!isLegacyAnswer(probe) && !(probe instanceof ProbeIgnoredError)) throw probe;
    try {
      session = await openLegacyOrSse(wire, config, options);
    } catch (error) {
      throw neitherEra(probe, error);
    }
  }
  if (key) options.eraCache?.set(key, session.era);
  return session;
}

/**
 * `initialize` on Streamable HTTP; when that POST is refused too (4xx without a JSON-RPC
 * answer), the deprecated HTTP+SSE transport on the same URL.
 */
async function openLegacyOrSse(
  wire: Wire,
  config: SessionConfig,
  options: EraOptions,
): Promise<Session> {
  try {
    return await openLegacy(wire, config, options);
  } catch (error) {
    if (!(wire instanceof HttpWire) || !isHttpRefusal(error)) throw error;
    const sse = new SseWire(wire.url, wire.options);
    sse.handlers = wire.handlers;
    try {
      await sse.open(options.signal);
    } catch {
      throw error;
    }
    return openLegacy(sse, config, options);
  }
}

/** The HTTP options, with a fetch that signs in when `auth` is given. */
function signedIn(target: string | URL, options: McpClientOptions): McpClientOptions {
  if (!options.auth) return options;
  return { ...options, fetch: new OAuthSession(target, options.auth, options.fetch).fetch };
}

/**
 * Opens a client's session on `target` (a Streamable HTTP URL, or a wire such as stdio): the
 * wire's handlers installed (notifications to `onNotification`, server requests to `onInput`),
 * the capabilities the callbacks imply declared, the era detected. A wire that fails to open
 * is closed.
 */
export async function openClientSession(
  target: string | URL | Wire,
  options: McpClientOptions,
  onNotification: (notification: Notification) => void,
): Promise<Session> {
  const wire =
    typeof target === "string" || target instanceof URL
      ? new HttpWire(target, signedIn(target, options))
      : target;
  const input = new InputRouter(options.onInput ?? {});
  const telemetry = createTelemetry(options.telemetry);
  wire.handlers = {
    notification: onNotification,
    request: (method, params, origin) => input.answer(method, params, origin),
    telemetry,
  };
  const config: SessionConfig = {
    clientInfo: options.clientInfo ?? { name: "mcp-mount-client", version: "0.1.0" },
    capabilities: { ...capabilitiesFor(input.client), ...options.capabilities },
    input,
    ...(options.logLevel ? { logLevel: options.logLevel } : {}),
    telemetry,
  };
  const era: EraOptions = {
    era: options.era ?? "auto",
    eraCache: options.eraCache === false ? undefined : (options.eraCache ?? rememberedEras),
    probeTimeoutMs: options.probeTimeoutMs ?? 3_000,
  };
  if (options.signal) era.signal = options.signal;
  try {
    // An SDK is registered: the handshake's spans need the OpenTelemetry API loaded.
    await telemetry?.pending;
    return await openSession(wire, config, era);
  } catch (error) {
    await wire.close().catch(() => {});
    throw error;
  }
}
