import { ErrorCode, isMcpError, McpError } from "../protocol/errors.js";
import type { JsonObject, JsonRpcRequest } from "../protocol/messages.js";
import { answerDepthError, paramsDepthError } from "../protocol/params.js";
import type { LogLevel } from "../protocol/versions.js";
import type { RequestEnv } from "../server/context.js";
import { dispatch } from "../server/dispatch.js";
import type { Implementation } from "../server/types.js";
import type { SessionRecord } from "../store/types.js";
import { LazyAbort } from "../utils/lazy-abort.js";
import type { Caller, HandlerCore } from "./core.js";
import { shutdownError } from "./in-flight.js";
import type { SessionRuntime } from "./legacy-session.js";
import type { LegacyStream } from "./legacy-stream.js";
import { errorMessage, errorResponse, serializeResponse } from "./responses.js";
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
  { auth, app }: Caller,
  release: () => void,
): Promise<McpHttpResponse> {
  // Before anything walks them: recursive walkers would overflow the stack on deeper params.
  const tooDeep = paramsDepthError(request.params);
  if (tooDeep) {
    release();
    return Promise.resolve(
      errorResponse(400, tooDeep.code, tooDeep.message, request.id, tooDeep.data),
    );
  }
  const started = performance.now();
  // Disconnecting is not cancellation in this era; notifications/cancelled and DELETE are.
  const abort = new LazyAbort();
  const key = String(request.id);
  runtime.inflight.set(key, abort);
  const params = request.params ?? {};
  // Stateless mode: the record stands for no session (its id is empty).
  const sessionless = record.id === "";
  return new Promise<McpHttpResponse>((resolve) => {
    let stream: LegacyStream | undefined;
    const open = (): LegacyStream => {
      if (stream) return stream;
      stream = runtime.openStream(request.id);
      const writer = new SseStream();
      stream.attach(writer);
      if (record.protocolVersion >= PRIMING_VERSION) stream.prime(writer);
      resolve({ status: 200, headers: { ...SSE_HEADERS }, body: writer.readable });
      return stream;
    };
    const env: RequestEnv = {
      era: "legacy",
      protocolVersion: record.protocolVersion,
      clientCapabilities: record.capabilities,
      clientInfo: record.clientInfo as Implementation | undefined,
      logLevel: (record.logLevel as LogLevel | undefined) ?? "debug",
      abort,
      auth,
      app,
      hideUnauthorized: core.hideUnauthorized,
      sessionId: record.id || undefined,
      send: (notification) => {
        if (!abort.aborted) open().send(notification);
      },
      request: sessionless
        ? undefined
        : async (method, requestParams, signal) => {
            const answer = await runtime.request(open(), method, requestParams, signal);
            const tooDeep = answerDepthError(method, answer);
            if (tooDeep) throw tooDeep;
            return answer;
          },
      refuseInput: sessionless ? sessionlessInput : undefined,
      closeStream:
        record.protocolVersion >= PRIMING_VERSION ? () => open().detach(retryMs) : undefined,
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
      runtime.inflight.delete(key);
      core.observe({
        era: "legacy",
        method: request.method,
        params,
        started,
        client: env.clientInfo,
        auth,
        app,
        status,
        error,
      });
      const serialized = serializeResponse(body, request.id, (cause) =>
        core.reportError(cause, request.method, app),
      );
      if (stream) {
        stream.send(serialized.body as never);
        stream.finish();
        runtime.streams.delete(stream.id);
      } else {
        resolve({
          status,
          headers: { "content-type": "application/json", ...headers },
          body: serialized.text,
        });
      }
      release();
    };
    // A drain whose grace ends first answers for the handler: on the stream, so the answer is
    // in the replay log and a client resuming on another process gets it at once.
    const leave = core.inflight.begin(() => {
      const error = shutdownError();
      finish(stream ? 200 : 503, errorMessage(error, request.id), error, {
        "retry-after": "1",
      });
      abort.abort(new Error("Server is shutting down"));
    });
    dispatch(
      core.server,
      core.runtime,
      { id: request.id, method: request.method, params },
      env,
    ).then(
      (result) => finish(200, { jsonrpc: "2.0", id: request.id, result }),
      (error: unknown) => {
        const known = isMcpError(error)
          ? error
          : new McpError(ErrorCode.InternalError, "Internal error");
        if (!isMcpError(error)) core.reportError(error, request.method, app);
        // JSON-RPC errors travel as 200 in this era, so clients read them as errors, not transport failures.
        finish(200, errorMessage(known, request.id), known);
      },
    );
  });
}
