import { McpHttpError } from "./errors.js";
import { HttpWire } from "./http-wire.js";
import {
  isLegacyAnswer,
  LegacySession,
  ModernSession,
  type Session,
  type SessionConfig,
} from "./session.js";
import { SseWire } from "./sse-wire.js";
import type { Era } from "./types.js";
import type { Wire } from "./wire.js";

/** How a client finds its server's era. */
export interface EraOptions {
  /** Force an era, or detect it. @default "auto" */
  era: Era | "auto";
  /** Where detected eras are remembered, by endpoint; `undefined` remembers nothing. */
  eraCache: Map<string, Era> | undefined;
  /** How long a stdio probe waits for `server/discover` before trying `initialize`. */
  probeTimeoutMs: number;
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
  options: EraOptions,
): Promise<Session> {
  const session = new ModernSession(wire, config, "2026-07-28");
  // stdio has no status codes: a legacy server may simply not answer the probe.
  const probe =
    wire.kind === "http"
      ? options.signal
      : anySignal(options.signal, AbortSignal.timeout(options.probeTimeoutMs));
  await session.open(probe);
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

function anySignal(...signals: (AbortSignal | undefined)[]): AbortSignal {
  return AbortSignal.any(signals.filter((s): s is AbortSignal => s !== undefined));
}

function isProbeTimeout(error: unknown, options: EraOptions): boolean {
  return (error as Error)?.name === "TimeoutError" && !options.signal?.aborted;
}

/**
 * Opens a session in the server's era: the one forced or remembered, else a modern probe
 * first and `initialize` when the answer is not a modern one. A remembered era that fails is
 * forgotten and detected again.
 */
export async function openSession(
  wire: Wire,
  config: SessionConfig,
  options: EraOptions,
): Promise<Session> {
  if (options.era === "modern") return openModern(wire, config, options);
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
    session = await openModern(wire, config, options);
  } catch (error) {
    if (!isLegacyAnswer(error) && !isProbeTimeout(error, options)) throw error;
    session = await openLegacyOrSse(wire, config, options);
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
    const refused =
      error instanceof McpHttpError &&
      error.status >= 400 &&
      error.status < 500 &&
      error.status !== 401;
    if (!(wire instanceof HttpWire) || !refused) throw error;
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
