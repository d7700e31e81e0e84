import type { McpClient } from "../client/client.js";
import { McpHttpError } from "../client/errors.js";
import type { InputHandlers, Notification, RequestOptions } from "../client/types.js";
import { ErrorCode, isMcpError, McpError } from "../protocol/errors.js";
import { isObject, type JsonObject } from "../protocol/messages.js";
import { isLogLevel, MetaKey } from "../protocol/versions.js";
import { isIdentified, principalKey } from "../server/access.js";
import type { HandlerContext } from "../server/types.js";
import type { InputBridge } from "./input-bridge.js";
import type { Upstream, UpstreamKey } from "./types.js";

/** The options a forwarded request is sent upstream with: the caller's signal, progress, logs, input. */
export type ForwardOptions = RequestOptions;

/** Sends one request upstream on a lent client. */
export type Send = (client: McpClient, options: ForwardOptions) => Promise<JsonObject>;

/** The upstream connection a request belongs to: its legacy session and its principal. */
export function upstreamKey(ctx: HandlerContext): UpstreamKey {
  const { auth } = ctx;
  return {
    sessionId: ctx.sessionId,
    principal: auth && isIdentified(auth) ? principalKey(auth) : undefined,
  };
}

/**
 * Forwards one downstream request upstream: a connection acquired for it and given back, its
 * progress and log messages passed down, its cancellation passed up, and the upstream's
 * answer or error turned into the downstream era's.
 */
export async function forward(
  upstream: Upstream,
  ctx: HandlerContext,
  send: Send,
  bridge?: InputBridge,
): Promise<JsonObject> {
  const options = requestOptions(ctx);
  const key = upstreamKey(ctx);
  const run = async (extra: ForwardOptions, signal: AbortSignal): Promise<JsonObject> => {
    const lease = await upstream.acquire(key, signal);
    try {
      return await send(lease.client, { ...options, ...extra, signal });
    } finally {
      lease.release();
    }
  };
  try {
    const shared = upstream.scope === "process" || (!key.sessionId && !key.principal);
    const result = bridge
      ? await bridge.run(ctx, (onInput, signal) =>
          run({ onInput: shared ? ownRootsOnly(onInput) : onInput }, signal),
        )
      : await run({}, ctx.signal);
    return forDownstream(result);
  } catch (error) {
    throw toDownstreamError(error, ctx);
  }
}

/**
 * Input callbacks for an upstream that other clients share: a `roots/list` that names no call
 * (a stdio or GET-stream request, sent while this call happened to be the one in flight) is
 * refused, since the client's roots would stay with an upstream every client uses. Asked on
 * the call's own stream, or of a child of the client's own (session or principal scope), the
 * client answers it.
 */
function ownRootsOnly(onInput: InputHandlers): InputHandlers {
  const roots = onInput.roots;
  if (!roots) return onInput;
  return {
    ...onInput,
    roots: (context) => {
      if (!context.inferred) return roots(context);
      const message = "A roots/list that names no call is not answered for a shared upstream";
      throw new McpError(ErrorCode.MethodNotFound, message);
    },
  };
}

/** Progress and log messages of the upstream request, handed to the downstream one. */
function requestOptions(ctx: HandlerContext): ForwardOptions {
  // The caller decides how long to wait: the upstream round trip has no timeout of its own.
  const options: ForwardOptions = { timeoutMs: 0, fresh: true };
  if (ctx.meta.progressToken !== undefined) {
    options.onProgress = (progress) =>
      void ctx.progress(progress.progress, progress.total, progress.message).catch(() => {});
  }
  options.onNotification = (notification) => relayNotification(ctx, notification);
  return options;
}

/** Log messages on the request's own stream go down to its caller (at the caller's level). */
function relayNotification(ctx: HandlerContext, notification: Notification): void {
  if (notification.method !== "notifications/message") return;
  const params = notification.params ?? {};
  if (!isLogLevel(params.level)) return;
  const logger = typeof params.logger === "string" ? params.logger : undefined;
  void ctx.log(params.level, params.data, logger).catch(() => {});
}

/** Members of a result that belong to the upstream's era or identity, set again downstream. */
const ERA_FIELDS = ["resultType", "ttlMs", "cacheScope"];

/**
 * The upstream's result as this server answers it: without the upstream's era fields
 * (`resultType`, cache hints) and its `serverInfo`, which the downstream era adds back as its
 * own; everything else (`structuredContent`, `isError`, `_meta`) passes through.
 */
export function forDownstream(result: JsonObject): JsonObject {
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(result)) {
    if (!ERA_FIELDS.includes(key)) out[key] = value;
  }
  if (isObject(out._meta) && MetaKey.serverInfo in out._meta) {
    const { [MetaKey.serverInfo]: _upstream, ...meta } = out._meta;
    if (Object.keys(meta).length > 0) out._meta = meta;
    else delete out._meta;
  }
  return out;
}

/**
 * The upstream's failure as the downstream sees it: a JSON-RPC error as the upstream sent it
 * (a legacy not-found becoming InvalidParams for a modern caller, as that era requires), a
 * refused HTTP request as an internal error, and a lost connection as a retryable one.
 */
export function toDownstreamError(error: unknown, ctx: HandlerContext): unknown {
  if (isMcpError(error)) {
    if (ctx.era === "modern" && error.code === ErrorCode.ResourceNotFound) {
      return new McpError(ErrorCode.InvalidParams, error.message, error.data);
    }
    return error;
  }
  // A cancelled request answers nothing: its error goes nowhere.
  if (ctx.signal.aborted) return error;
  const message = error instanceof Error ? error.message : String(error);
  const retryable = !(error instanceof McpHttpError && error.status < 500);
  const mapped = new McpError(
    ErrorCode.InternalError,
    `Upstream request failed: ${message}`,
    retryable ? { retryable: true } : undefined,
  );
  mapped.cause = error;
  return mapped;
}
