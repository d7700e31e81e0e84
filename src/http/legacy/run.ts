import { ErrorCode } from "../../protocol/errors.js";
import type { JsonObject, JsonRpcRequest, RequestId } from "../../protocol/messages.js";
import { answerDepthError, paramsDepthError } from "../../protocol/params.js";
import type { LogLevel } from "../../protocol/versions.js";
import type { TransportContext } from "../../server/context.js";
import { isStreamMethod } from "../../server/extension.js";
import type { Implementation } from "../../server/types.js";
import { LazyAbort } from "../../utils/lazy-abort.js";
import type { Caller } from "../caller.js";
import type { EndpointServices } from "../endpoint-services.js";
import { exchange } from "../exchange.js";
import { errorResponse } from "../responses.js";
import { SseStream, sseHeaders } from "../streams/sse.js";
import { granted } from "../streams/stream-slots.js";
import type { McpHttpResponse } from "../types.js";
import type { LegacyStream } from "./stream.js";

/** The first version whose SSE streams start with a priming event. */
export const PRIMING_VERSION = "2025-11-25";

/** What a legacy request knows of the client from its session (or, stateless, its headers). */
export interface LegacyPeer {
  protocolVersion: string;
  capabilities: JsonObject;
  clientInfo?: Implementation;
  logLevel?: LogLevel;
  /** The session's id; none when served statelessly. */
  sessionId?: string;
}

/** Where a legacy request's streams, cancellation and server requests live. */
export interface RequestHost {
  /** Opens the request's response stream, once it sends something before its answer. */
  openStream(requestId: JsonRpcRequest["id"]): LegacyStream;
  /** Ends the response stream after the answer. */
  finishStream(stream: LegacyStream): void;
  /** Makes the request cancellable by `notifications/cancelled`; returns its untracking. */
  track(requestId: string, abort: LazyAbort): () => void;
  /** Sends a server request to the client on `stream` and awaits its answer (sessions only). */
  request?(
    stream: LegacyStream,
    method: string,
    params: JsonObject,
    signal: AbortSignal,
    onSent?: (id: RequestId) => void,
  ): Promise<JsonObject>;
  /** Why the request cannot ask the client for input (no session), for each capability. */
  refuseInput?(capability: string): Error;
  /** Once the request has its answer. */
  done(): void;
}

/** How one legacy request runs. */
export interface LegacyRequest {
  request: JsonRpcRequest;
  peer: LegacyPeer;
  host: RequestHost;
  caller: Caller;
  /** Who sent it, for the per-client cap on streams (see `EndpointServices.clientOf`). */
  client: string | undefined;
  /** `retry:` hint when the handler closes its stream early. */
  retryMs: number;
}

/**
 * Runs a request. JSON unless the handler sends something first; then an SSE stream that
 * carries its notifications and server requests, each event logged for resumption. The answer
 * comes at once when the handler answers at once.
 */
export function runLegacyRequest(
  core: EndpointServices,
  run: LegacyRequest,
): McpHttpResponse | Promise<McpHttpResponse> {
  const { request, peer, host, caller } = run;
  // Before anything walks them: recursive walkers would overflow the stack on deeper params.
  const tooDeep = paramsDepthError(request.params);
  if (tooDeep) {
    host.done();
    return errorResponse(400, tooDeep, { id: request.id });
  }
  // A stream method (events/stream) is a long-lived connection: it takes a slot, as in the
  // modern era, and ends with its connection (which otherwise is not cancellation here).
  const endsWithConnection = isStreamMethod(core.dispatchServices.extensions, request.method);
  const slot = endsWithConnection ? core.slots.take(run.client, request.id) : undefined;
  if (slot !== undefined && !granted(slot)) {
    host.done();
    return slot;
  }
  // Disconnecting is not cancellation in this era; notifications/cancelled and DELETE are.
  const abort = new LazyAbort();
  const untrack = host.track(String(request.id), abort);
  const primes = peer.protocolVersion >= PRIMING_VERSION;
  let stream: LegacyStream | undefined;
  return exchange(
    core,
    { id: request.id, method: request.method, params: request.params ?? {} },
    {
      era: "legacy",
      client: peer.clientInfo,
      caller,
      // JSON-RPC errors travel as 200 in this era, so clients read them as errors, not
      // transport failures; a rate limit is 429 as when it is met before the request runs.
      errorStatus: (error) => (error.code === ErrorCode.RateLimited ? 429 : 200),
      openStream(answer) {
        const opened = host.openStream(request.id);
        stream = opened;
        const writer = new SseStream();
        opened.attach(writer);
        if (endsWithConnection)
          writer.onClose(() => abort.abort(new Error("client closed the stream")));
        if (primes) opened.prime(writer);
        answer({ status: 200, headers: sseHeaders(), body: writer.readable });
        return {
          send: (message) => opened.send(message),
          writable: () => opened.writable(),
          // Logged with the end, so a client resuming on another process gets it at once.
          end({ body }) {
            opened.send(body as never);
            host.finishStream(opened);
          },
        };
      },
      env: (open) =>
        legacyTransport(core, run, abort, () => {
          open();
          return stream!;
        }),
      done() {
        untrack();
        slot?.();
        host.done();
      },
    },
  );
}

/** What the dispatcher gets of a legacy request; `stream()` opens its SSE stream on first use. */
function legacyTransport(
  core: EndpointServices,
  { request, peer, host, caller, retryMs }: LegacyRequest,
  abort: LazyAbort,
  stream: () => LegacyStream,
): TransportContext {
  return {
    era: "legacy",
    protocolVersion: peer.protocolVersion,
    clientCapabilities: peer.capabilities,
    clientInfo: peer.clientInfo,
    logLevel: peer.logLevel ?? "debug",
    abort,
    auth: caller.auth,
    app: caller.app,
    charge: caller.charge,
    hideUnauthorized: core.hideUnauthorized,
    sessionId: peer.sessionId,
    send: (notification) => {
      if (!abort.aborted) stream().send(notification);
    },
    writable: () => stream().writable(),
    // Called on the host, not bound to it: a plain call makes no bound function.
    request: host.request
      ? async (method, params, signal, _key, onSent) => {
          const answer = await host.request!(stream(), method, params, signal, onSent);
          const tooDeep = answerDepthError(method, answer);
          if (tooDeep) throw tooDeep;
          return answer;
        }
      : undefined,
    refuseInput: host.refuseInput,
    closeStream:
      peer.protocolVersion >= PRIMING_VERSION ? () => stream().detach(retryMs) : undefined,
    onError: (error) => core.reportError(error, request.method, caller.app),
  };
}
