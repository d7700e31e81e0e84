import { ErrorCode, invalidParams, McpError } from "../protocol/errors.js";
import type { JsonObject } from "../protocol/messages.js";
import { isObject } from "../protocol/messages.js";
import { MetaKey } from "../protocol/versions.js";
import { serializedOnce } from "../utils/json-text.js";
import type { TransportContext } from "./context.js";
import { cacheHints, type McpServer } from "./mcp-server.js";
import type { CacheHints, Era } from "./types.js";

/**
 * What differs between the eras once a request is dispatched: how results are decorated, which
 * error a missing resource raises, and whether a request may run in multi round-trips.
 */
export interface EraPolicy {
  /** Whether extensions (`capabilities.extensions`, such as tasks) apply in this era. */
  readonly extensions: boolean;
  /** Adds the server's cache hints for a result, where the era carries them. */
  withCache(result: JsonObject, hints: CacheHints | undefined, env: TransportContext): JsonObject;
  /** The error for a resource URI that nothing serves. */
  notFound(uri: string): McpError;
  /** Whether `method` runs as one round of a multi round-trip request (MRTR). */
  multiRound(method: string, env: TransportContext): boolean;
  /** Completes a result for the wire: the era's `resultType` and the server's `_meta`. */
  decorate(server: McpServer, result: JsonObject): JsonObject;
}

/** Methods that may answer `input_required` (spec: patterns/mrtr, supported requests). */
const MRTR_METHODS = new Set(["tools/call", "prompts/get", "resources/read"]);

/** One `_meta` per server for results that carry no `_meta` of their own (server.info is frozen). */
const serverMetas = new WeakMap<McpServer, JsonObject>();

function serverMeta(server: McpServer): JsonObject {
  let meta = serverMetas.get(server);
  if (!meta) {
    // Serialised once: it goes out on every modern answer (serializeResult).
    meta = serializedOnce({ [MetaKey.serverInfo]: server.info });
    serverMetas.set(server, meta);
  }
  return meta;
}

/** The 2026-07-28 era: stateless requests, cache hints, MRTR, and server info on every result. */
export const modernPolicy: EraPolicy = {
  extensions: true,
  withCache(result, hints, env) {
    const applied = cacheHints(hints);
    // A list filtered by the caller's scopes must not be shared with other callers.
    if (env.hideUnauthorized) applied.cacheScope = "private";
    return Object.assign(result, applied);
  },
  notFound(uri) {
    // Modern servers must not emit -32002 (spec: basic/index, error codes).
    return invalidParams(`Resource not found: ${uri}`, { uri });
  },
  multiRound(method, env) {
    // With a way to ask the client directly (a task's work), inputs need no extra round.
    return !env.request && MRTR_METHODS.has(method);
  },
  decorate(server, result) {
    result.resultType ??= "complete";
    const meta = serverMeta(server);
    result._meta = isObject(result._meta) ? { ...result._meta, ...meta } : meta;
    return result;
  },
};

/** The session eras (2025-03-26 to 2025-11-25): results go out as the handlers made them. */
export const legacyPolicy: EraPolicy = {
  extensions: false,
  withCache: (result) => result,
  notFound: (uri) =>
    new McpError(ErrorCode.ResourceNotFound, `Resource not found: ${uri}`, { uri }),
  multiRound: () => false,
  decorate: (_server, result) => result,
};

const POLICIES: Record<Era, EraPolicy> = { modern: modernPolicy, legacy: legacyPolicy };

/** The policy of a request's era. */
export function eraPolicy(era: Era): EraPolicy {
  return POLICIES[era];
}
