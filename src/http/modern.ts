import { ErrorCode, invalidParams, isMcpError, McpError } from "../protocol/errors.js";
import type { JsonObject, JsonRpcNotification, JsonRpcRequest } from "../protocol/messages.js";
import { paramsDepthError } from "../protocol/params.js";
import { principalKey } from "../server/access.js";
import type { RequestEnv } from "../server/context.js";
import { dispatch, hasMethod } from "../server/dispatch.js";
import { type ModernMeta, readModernMeta, unsupportedVersion } from "../server/modern-meta.js";
import { declaresTasks, TASKS_EXTENSION, TASKS_REQUIRED } from "../server/task-shape.js";
import type { AuthInfo } from "../server/types.js";
import { LazyAbort } from "../utils/lazy-abort.js";
import type { Caller, HandlerCore } from "./core.js";
import { validateMirroredHeaders, validateVersionHeader } from "./headers.js";
import { shutdownError } from "./in-flight.js";
import { type ListenFilter, listenSink, parseListenFilter } from "./listen-hub.js";
import { errorMessage, errorResponse, inBandStatus, serializeResponse } from "./responses.js";
import { SSE_HEADERS, SseStream } from "./sse.js";
import { granted } from "./stream-slots.js";
import type { McpHttpRequest, McpHttpResponse } from "./types.js";

/** Serves one modern-era (2026-07-28) message: stateless, everything from the request. */
export async function handleModern(
  core: HandlerCore,
  req: McpHttpRequest,
  message: JsonRpcRequest | JsonRpcNotification,
  caller: Caller = {},
): Promise<McpHttpResponse> {
  const { auth } = caller;
  const id = "id" in message ? message.id : undefined;
  const params = message.params ?? {};
  let meta: ModernMeta;
  try {
    // Before anything walks them: recursive walkers would overflow the stack on deeper params.
    const tooDeep = paramsDepthError(params);
    if (tooDeep) throw tooDeep;
    meta = readModernMeta(params);
    validateVersionHeader(req, meta.version);
    const unsupported = unsupportedVersion(meta.version);
    if (unsupported) throw unsupported;
    // The spec defines no client notifications over modern HTTP; accept and drop them.
    if (id === undefined) return { status: 202, headers: {}, body: null };
    const tool =
      message.method === "tools/call" ? core.server.tools.get(params.name as string) : undefined;
    validateMirroredHeaders(req, message.method, params, tool);
  } catch (error) {
    const known = isMcpError(error) ? error : invalidParams(String(error));
    return errorResponse(400, known.code, known.message, id, known.data);
  }
  if (message.method !== "subscriptions/listen" && !hasMethod(core.server, message.method)) {
    return errorResponse(404, ErrorCode.MethodNotFound, `Method not found: ${message.method}`, id);
  }
  const request = { id: id!, method: message.method, params };
  if (request.method === "subscriptions/listen") return listen(core, req, request, meta, auth);
  return run(core, req, request, meta, caller);
}

function listen(
  core: HandlerCore,
  req: McpHttpRequest,
  request: { id: JsonRpcRequest["id"]; params: JsonObject },
  meta: ModernMeta,
  auth: AuthInfo | undefined,
): McpHttpResponse {
  let filter: ListenFilter;
  try {
    filter = parseListenFilter(request.params);
  } catch (error) {
    const known = error as McpError;
    return errorResponse(400, known.code, known.message, request.id);
  }
  if (filter.taskIds && !(core.tasksEnabled && declaresTasks(meta.capabilities))) {
    return errorResponse(
      400,
      ErrorCode.MissingRequiredClientCapability,
      `Task notifications need the ${TASKS_EXTENSION} extension`,
      request.id,
      TASKS_REQUIRED,
    );
  }
  const slot = core.slots.take(core.clientOf(req, auth), request.id);
  if (!granted(slot)) return slot;
  const stream = new SseStream();
  stream.onClose(slot);
  stream.onClose(core.hub.add(listenSink(request.id, stream, filter, principalKey(auth))));
  return { status: 200, headers: { ...SSE_HEADERS }, body: stream.readable };
}

/**
 * Runs a request. The answer is JSON unless the handler sends a notification first, in which
 * case it switches to an SSE stream scoped to the request (spec: transports, sending messages).
 */
function run(
  core: HandlerCore,
  req: McpHttpRequest,
  request: { id: JsonRpcRequest["id"]; method: string; params: JsonObject },
  meta: ModernMeta,
  { auth, app }: Caller,
): Promise<McpHttpResponse> {
  const started = performance.now();
  const abort = new LazyAbort();
  const onAbort = () => abort.abort(new Error("client went away"));
  // Hosts that can report a disconnect without an AbortSignal save building one per request.
  if (req.onAbort) req.onAbort(onAbort);
  else if (req.signal.aborted) onAbort();
  else req.signal.addEventListener("abort", onAbort, { once: true });

  return new Promise<McpHttpResponse>((resolve) => {
    let stream: SseStream | undefined;
    const env: RequestEnv = {
      era: "modern",
      protocolVersion: meta.version,
      clientCapabilities: meta.capabilities,
      clientInfo: meta.clientInfo,
      logLevel: meta.logLevel,
      abort,
      auth,
      app,
      client: core.clientOf(req, auth),
      hideUnauthorized: core.hideUnauthorized,
      send(notification) {
        if (abort.aborted) return;
        if (!stream) {
          stream = new SseStream();
          // Closing the response stream is cancellation (spec: transports, cancellation).
          stream.onClose(() => abort.abort(new Error("client closed the stream")));
          resolve({ status: 200, headers: { ...SSE_HEADERS }, body: stream.readable });
        }
        stream.send(notification);
      },
      onError: (error) => core.reportError(error, request.method, app),
    };
    let finished = false;
    const finish = (
      status: number,
      body: JsonObject,
      error?: unknown,
      headers?: Record<string, string>,
    ) => {
      if (finished) return;
      finished = true;
      leave();
      if (!req.onAbort) req.signal.removeEventListener("abort", onAbort);
      core.observe({
        era: "modern",
        method: request.method,
        params: request.params,
        started,
        client: meta.clientInfo,
        auth,
        app,
        status,
        error,
      });
      const { text } = serializeResponse(body, request.id, (cause) =>
        core.reportError(cause, request.method, app),
      );
      if (stream) {
        // Nothing more is written once the client has cancelled.
        if (!abort.aborted) stream.sendJson(text);
        stream.close();
      } else {
        resolve({
          status,
          headers: { "content-type": "application/json", ...headers },
          body: text,
        });
      }
    };
    // A drain whose grace ends first answers for the handler, which is then stopped.
    const leave = core.inflight.begin(() => {
      const error = shutdownError();
      finish(503, errorMessage(error, request.id), error, { "retry-after": "1" });
      abort.abort(new Error("Server is shutting down"));
    });
    dispatch(core.server, core.runtime, request, env).then(
      (result) => finish(200, resultResponseBody(request.id, result)),
      (error: unknown) => {
        const known = isMcpError(error)
          ? error
          : new McpError(ErrorCode.InternalError, "Internal error");
        if (!isMcpError(error)) core.reportError(error, request.method, app);
        finish(inBandStatus(known), errorMessage(known, request.id), known);
      },
    );
  });
}

function resultResponseBody(id: JsonRpcRequest["id"], result: JsonObject): JsonObject {
  return { jsonrpc: "2.0", id, result };
}
