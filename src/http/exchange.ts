import { ErrorCode, isMcpError, McpError } from "../protocol/errors.js";
import type { JsonObject, JsonRpcMessage, RequestId } from "../protocol/messages.js";
import type { TransportContext } from "../server/context.js";
import { dispatchNow } from "../server/dispatch.js";
import type { Era, Implementation } from "../server/types.js";
import { isThenable } from "../utils/thenable.js";
import type { Caller } from "./caller.js";
import type { EndpointServices } from "./endpoint-services.js";
import { errorMessage, serializeResponse, serializeResult } from "./responses.js";
import { shutdownError } from "./streams/in-flight.js";
import type { McpHttpResponse } from "./types.js";

/** `Retry-After` for a rate-limit error answered 429 (its data says how long). */
function retryAfterOf(error: McpError, status: number): Record<string, string> | undefined {
  const data = error.data as { retryAfter?: unknown } | undefined;
  if (status !== 429 || typeof data?.retryAfter !== "number") return undefined;
  return { "retry-after": String(data.retryAfter) };
}

function internalError(): McpError {
  return new McpError(ErrorCode.InternalError, "Internal error");
}

/** Runs `run`, then hands what it answers (at once or later) to `succeeded`, or its failure to `failed`. */
function settle<T>(
  run: () => T | Promise<T>,
  succeeded: (value: T) => void,
  failed: (error: unknown) => void,
): void {
  let outcome: T | Promise<T>;
  try {
    outcome = run();
  } catch (error) {
    failed(error);
    return;
  }
  if (isThenable(outcome)) outcome.then(succeeded, failed);
  else succeeded(outcome);
}

/** Where a request's messages go once it answers with an SSE stream. */
export interface AnswerStream {
  /** A message related to the request (a notification, a legacy server request). */
  send(message: JsonRpcMessage): void;
  /** Resolves once the stream's reader caught up with what was sent, or it closed. */
  writable(): Promise<void>;
  /** The request's answer, then the stream's end. */
  end(answer: { body: JsonObject; text: string }): void;
}

/** How one era answers a request; the exchange does the rest, the same for both. */
export interface ExchangePolicy {
  era: Era;
  client: Implementation | undefined;
  caller: Caller;
  /** The HTTP status of a JSON-RPC error the handler ended with. */
  errorStatus(error: McpError): number;
  /** Opens the request's SSE stream and answers the HTTP request with it (once). */
  openStream(answer: (response: McpHttpResponse) => void): AnswerStream;
  /** Builds what the handler runs in; `stream()` opens the SSE stream on first use. */
  env(stream: () => AnswerStream): TransportContext;
  /** Once the request has its answer, whichever way it went. */
  done?(): void;
}

/**
 * Runs one request and answers it: JSON unless the handler sends something first, then an SSE
 * stream that carries its messages and ends with the answer (spec: transports, sending messages).
 * A drain whose grace ends first answers for the handler, retryably, and stops it. The response
 * comes without a promise when the handler answered at once (or opened its stream at once).
 */
export function exchange(
  core: EndpointServices,
  request: { id: RequestId; method: string; params: JsonObject },
  policy: ExchangePolicy,
): McpHttpResponse | Promise<McpHttpResponse> {
  // Timed only for the app's onRequest hook: a clock read is not free on every machine.
  const started = core.observe ? performance.now() : 0;
  const { auth, app } = policy.caller;
  const report = (error: unknown) => core.reportError(error, request.method, app);
  // The HTTP response: known at once, or given to the promise made once it is not.
  let response: McpHttpResponse | undefined;
  let respond: ((response: McpHttpResponse) => void) | undefined;
  const deliver = (answer: McpHttpResponse) => {
    if (respond) respond(answer);
    else response = answer;
  };
  let stream: AnswerStream | undefined;
  const openStream = () => {
    stream ??= policy.openStream(deliver);
    return stream;
  };
  const env = policy.env(openStream);
  if (policy.caller.operation) env.operation = policy.caller.operation;
  let answered = false;
  const answer = (
    status: number,
    serialized: { body: JsonObject; text: string },
    error?: unknown,
    headers?: Record<string, string>,
  ) => {
    if (answered) return;
    answered = true;
    leave();
    core.observe?.({
      era: policy.era,
      method: request.method,
      params: request.params,
      started,
      client: policy.client,
      auth,
      app,
      status,
      error,
    });
    if (stream) stream.end(serialized);
    else
      deliver({
        status,
        headers: { "content-type": "application/json", ...headers },
        body: serialized.text,
      });
    policy.done?.();
  };
  const leave = core.inflight.begin(() => {
    const error = shutdownError();
    answer(503, serializeResponse(errorMessage(error, request.id), request.id, report), error, {
      "retry-after": "1",
    });
    env.abort.abort(new Error("Server is shutting down"));
  });
  const succeeded = (result: JsonObject) => {
    // Not serialised when a drain has answered already.
    if (!answered) answer(200, serializeResult(result, request.id, report));
  };
  const failed = (error: unknown) => {
    // Reported even when a drain has answered already: it is still the server's failure.
    if (!isMcpError(error)) report(error);
    if (answered) return;
    const known = isMcpError(error) ? error : internalError();
    const status = policy.errorStatus(known);
    const message = serializeResponse(errorMessage(known, request.id), request.id, report);
    answer(status, message, known, retryAfterOf(known, status));
  };
  settle(() => dispatchNow(core.server, core.dispatchServices, request, env), succeeded, failed);
  if (response) return response;
  return new Promise<McpHttpResponse>((resolve) => {
    respond = resolve;
  });
}
