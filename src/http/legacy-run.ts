import type { JsonRpcRequest } from "../protocol/messages.js";
import { answerDepthError, paramsDepthError } from "../protocol/params.js";
import type { LogLevel } from "../protocol/versions.js";
import type { Implementation } from "../server/types.js";
import type { SessionRecord } from "../store/types.js";
import { LazyAbort } from "../utils/lazy-abort.js";
import type { Caller, HandlerCore } from "./core.js";
import { exchange } from "./exchange.js";
import type { SessionRuntime } from "./legacy-session.js";
import type { LegacyStream } from "./legacy-stream.js";
import { errorResponse } from "./responses.js";
import { SSE_HEADERS, SseStream } from "./sse.js";
import type { McpHttpResponse } from "./types.js";

/** The first version whose SSE streams start with a priming event. */
export const PRIMING_VERSION = "2025-11-25";

/**
 * Why a legacy request without a session (stateless mode) cannot ask the client for input: a
 * server request travels on a session's stream, and its answer is posted back to that session.
 */
function sessionlessInput(capability: string): Error {
  return new Error(
    `${capability} needs a legacy session: this endpoint serves legacy clients statelessly (legacy.stateless), so server requests are unavailable; use the 2026-07-28 protocol or a session`,
  );
}

/**
 * Runs a request. JSON unless the handler sends something first; then an SSE stream that
 * carries its notifications and server requests, each event logged for resumption.
 */
export function runLegacyRequest(
  core: HandlerCore,
  runtime: SessionRuntime,
  record: SessionRecord,
  request: JsonRpcRequest,
  retryMs: number,
  caller: Caller,
  release: () => void,
): Promise<McpHttpResponse> {
  // Before anything walks them: recursive walkers would overflow the stack on deeper params.
  const tooDeep = paramsDepthError(request.params);
  if (tooDeep) {
    release();
    return Promise.resolve(errorResponse(400, tooDeep, { id: request.id }));
  }
  // Disconnecting is not cancellation in this era; notifications/cancelled and DELETE are.
  const abort = new LazyAbort();
  const key = String(request.id);
  runtime.inflight.set(key, abort);
  const params = request.params ?? {};
  // Stateless mode: the record stands for no session (its id is empty).
  const sessionless = record.id === "";
  const clientInfo = record.clientInfo as Implementation | undefined;
  let stream: LegacyStream | undefined;
  return exchange(
    core,
    { id: request.id, method: request.method, params },
    {
      era: "legacy",
      client: clientInfo,
      caller,
      // JSON-RPC errors travel as 200 in this era, so clients read them as errors, not
      // transport failures.
      errorStatus: () => 200,
      openStream(answer) {
        const opened = runtime.openStream(request.id);
        stream = opened;
        const writer = new SseStream();
        opened.attach(writer);
        if (record.protocolVersion >= PRIMING_VERSION) opened.prime(writer);
        answer({ status: 200, headers: { ...SSE_HEADERS }, body: writer.readable });
        return {
          send: (message) => opened.send(message),
          // Logged with the end, so a client resuming on another process gets it at once.
          end({ body }) {
            opened.send(body as never);
            opened.finish();
            runtime.streams.delete(opened.id);
          },
        };
      },
      env: (open) => ({
        era: "legacy",
        protocolVersion: record.protocolVersion,
        clientCapabilities: record.capabilities,
        clientInfo,
        logLevel: (record.logLevel as LogLevel | undefined) ?? "debug",
        abort,
        auth: caller.auth,
        app: caller.app,
        hideUnauthorized: core.hideUnauthorized,
        sessionId: record.id || undefined,
        send: (notification) => {
          if (!abort.aborted) open().send(notification);
        },
        request: sessionless
          ? undefined
          : async (method, requestParams, signal) => {
              open();
              const answer = await runtime.request(stream!, method, requestParams, signal);
              const tooDeep = answerDepthError(method, answer);
              if (tooDeep) throw tooDeep;
              return answer;
            },
        refuseInput: sessionless ? sessionlessInput : undefined,
        closeStream:
          record.protocolVersion >= PRIMING_VERSION
            ? () => {
                open();
                stream!.detach(retryMs);
              }
            : undefined,
        onError: (error) => core.reportError(error, request.method, caller.app),
      }),
      done() {
        runtime.inflight.delete(key);
        release();
      },
    },
  );
}
