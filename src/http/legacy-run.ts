import { ErrorCode, isMcpError, McpError } from "../protocol/errors.js";
import type { JsonObject, JsonRpcRequest } from "../protocol/messages.js";
import type { LogLevel } from "../protocol/versions.js";
import type { RequestEnv } from "../server/context.js";
import { dispatch } from "../server/dispatch.js";
import type { AuthInfo, Implementation } from "../server/types.js";
import type { SessionRecord } from "../store/types.js";
import { LazyAbort } from "../utils/lazy-abort.js";
import type { HandlerCore } from "./core.js";
import type { SessionRuntime } from "./legacy-session.js";
import type { LegacyStream } from "./legacy-stream.js";
import { errorMessage } from "./responses.js";
import { SSE_HEADERS, SseStream } from "./sse.js";
import type { McpHttpResponse } from "./types.js";

/** The first version whose SSE streams start with a priming event. */
export const PRIMING_VERSION = "2025-11-25";

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
  auth: AuthInfo | undefined,
  release: () => void,
): Promise<McpHttpResponse> {
  const started = performance.now();
  // Disconnecting is not cancellation in this era; notifications/cancelled and DELETE are.
  const abort = new LazyAbort();
  const key = String(request.id);
  runtime.inflight.set(key, abort);
  const params = request.params ?? {};
  return new Promise<McpHttpResponse>((resolve) => {
    let stream: LegacyStream | undefined;
    const open = (): LegacyStream => {
      if (stream) return stream;
      stream = runtime.openStream();
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
      hideUnauthorized: core.hideUnauthorized,
      sessionId: record.id || undefined,
      send: (notification) => {
        if (!abort.aborted) open().send(notification);
      },
      request: (method, requestParams, signal) =>
        runtime.request(open(), method, requestParams, signal),
      closeStream:
        record.protocolVersion >= PRIMING_VERSION ? () => open().detach(retryMs) : undefined,
      onError: (error) => core.reportError(error, request.method),
    };
    const finish = (status: number, body: JsonObject, error?: unknown) => {
      runtime.inflight.delete(key);
      core.observe({
        era: "legacy",
        method: request.method,
        params,
        started,
        client: env.clientInfo,
        auth,
        status,
        error,
      });
      if (stream) {
        stream.send(body as never);
        stream.finish();
        runtime.streams.delete(stream.id);
      } else {
        resolve({
          status,
          headers: { "content-type": "application/json" },
          body: JSON.stringify(body),
        });
      }
      release();
    };
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
        if (!isMcpError(error)) core.reportError(error, request.method);
        // JSON-RPC errors travel as 200 in this era, so clients read them as errors, not transport failures.
        finish(200, errorMessage(known, request.id), known);
      },
    );
  });
}
