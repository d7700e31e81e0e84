import { ErrorCode, invalidParams, isMcpError, McpError } from "../../protocol/errors.js";
import type { JsonObject, JsonRpcNotification, JsonRpcRequest } from "../../protocol/messages.js";
import { paramsDepthError } from "../../protocol/params.js";
import { principalKey } from "../../server/access.js";
import { isStreamMethod, servedListenFlags } from "../../server/extension.js";
import { type ListenFilter, listenSink, parseListenFilter } from "../../server/listen-hub.js";
import { hasMethod } from "../../server/method-handlers.js";
import { type ModernMeta, readModernMeta, unsupportedVersion } from "../../server/modern-meta.js";
import type { AuthInfo } from "../../server/types.js";
import { LazyAbort } from "../../utils/lazy-abort.js";
import type { Caller } from "../caller.js";
import type { EndpointServices } from "../endpoint-services.js";
import { exchange } from "../exchange.js";
import { errorResponse, inBandStatus, sseResponse } from "../responses.js";
import { onClientGone } from "../streams/client-gone.js";
import { SseStream, sseHeaders } from "../streams/sse.js";
import { granted } from "../streams/stream-slots.js";
import type { McpHttpRequest, McpHttpResponse } from "../types.js";
import { validateMirroredHeaders, validateVersionHeader } from "./headers.js";

/**
 * Serves one modern-era (2026-07-28) message: stateless, everything from the request. Not async:
 * a refusal is answered at once and a call hands on what its exchange answers (the response
 * itself when the handler answered at once, else its promise), with no promise of its own around
 * it (the router, which awaits a promise, turns a throw into a 500).
 */
export function handleModern(
  core: EndpointServices,
  req: McpHttpRequest,
  message: JsonRpcRequest | JsonRpcNotification,
  caller: Caller = {},
): Promise<McpHttpResponse> | McpHttpResponse {
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
    return errorResponse(400, known, { id });
  }
  if (
    message.method !== "subscriptions/listen" &&
    !hasMethod(core.server, message.method, core.dispatchServices.extensions)
  ) {
    return errorResponse(
      404,
      new McpError(ErrorCode.MethodNotFound, `Method not found: ${message.method}`),
      { id },
    );
  }
  const request = { id: id!, method: message.method, params };
  if (request.method === "subscriptions/listen") return listen(core, req, request, meta, auth);
  // A stream (events/stream) is no request to cap, but a long-lived connection, as listen's.
  if (!isStreamMethod(core.dispatchServices.extensions, request.method))
    return run(core, req, request, meta, caller);
  const slot = core.slots.take(core.clientOf(req, auth), request.id);
  return granted(slot) ? run(core, req, request, meta, caller, slot) : slot;
}

function listen(
  core: EndpointServices,
  req: McpHttpRequest,
  request: { id: JsonRpcRequest["id"]; params: JsonObject },
  meta: ModernMeta,
  auth: AuthInfo | undefined,
): McpHttpResponse {
  let filter: ListenFilter;
  try {
    filter = parseListenFilter(
      request.params,
      servedListenFlags(core.dispatchServices.extensions ?? []),
    );
  } catch (error) {
    const known = error as McpError;
    return errorResponse(400, known, { id: request.id });
  }
  for (const extension of core.dispatchServices.extensions ?? []) {
    const refused = extension.refuseListen?.(filter, meta.capabilities);
    if (refused) return errorResponse(400, refused, { id: request.id });
  }
  const slot = core.slots.take(core.clientOf(req, auth), request.id);
  if (!granted(slot)) return slot;
  const stream = new SseStream();
  stream.onClose(slot);
  stream.onClose(core.hub.add(listenSink(request.id, stream, filter, principalKey(auth))));
  return sseResponse(stream);
}

/**
 * Runs a request (see {@link exchange}). Its SSE stream is scoped to the request, and the client
 * closing it is cancellation (spec: transports, cancellation).
 */
function run(
  core: EndpointServices,
  req: McpHttpRequest,
  request: { id: JsonRpcRequest["id"]; method: string; params: JsonObject },
  meta: ModernMeta,
  caller: Caller,
  release?: () => void,
): McpHttpResponse | Promise<McpHttpResponse> {
  const abort = new LazyAbort();
  const stopWatching = onClientGone(req, () => abort.abort(new Error("client went away")));
  return exchange(core, request, {
    era: "modern",
    client: meta.clientInfo,
    caller,
    errorStatus: inBandStatus,
    openStream(answer) {
      const stream = new SseStream();
      stream.onClose(() => abort.abort(new Error("client closed the stream")));
      answer({ status: 200, headers: sseHeaders(), body: stream.readable });
      return {
        send: (message) => stream.send(message),
        writable: () => stream.writable(),
        end({ text }) {
          // Nothing more is written once the client has cancelled.
          if (!abort.aborted) stream.sendJson(text);
          stream.close();
        },
      };
    },
    env: (stream) => ({
      era: "modern",
      protocolVersion: meta.version,
      clientCapabilities: meta.capabilities,
      clientInfo: meta.clientInfo,
      logLevel: meta.logLevel,
      abort,
      auth: caller.auth,
      app: caller.app,
      client: core.clientOf(req, caller.auth),
      charge: caller.charge,
      hideUnauthorized: core.hideUnauthorized,
      send(notification) {
        if (!abort.aborted) stream().send(notification);
      },
      writable: () => stream().writable(),
      onError: (error) => core.reportError(error, request.method, caller.app),
    }),
    done() {
      stopWatching();
      release?.();
    },
  });
}
