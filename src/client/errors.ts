import type { JsonObject } from "../protocol/messages.js";

export { ErrorCode, isMcpError, McpError } from "../protocol/errors.js";

/** One server request embedded in an `input_required` result (spec: patterns/mrtr). */
export interface InputRequest {
  method: string;
  params?: JsonObject;
}

/**
 * The server needs input the client cannot give: no `onInput` callback answers one of its
 * requests, or the rounds ran out. Carries what the server asked for, so a caller can answer
 * and retry by hand with `inputResponses` and the exact `requestState`.
 */
export class InputRequiredError extends Error {
  readonly method: string;
  readonly inputRequests: Record<string, InputRequest>;
  readonly requestState: string | undefined;

  constructor(
    message: string,
    method: string,
    inputRequests: Record<string, InputRequest>,
    requestState?: string,
  ) {
    super(message);
    this.name = "InputRequiredError";
    this.method = method;
    this.inputRequests = inputRequests;
    this.requestState = requestState;
  }
}

/** A tool that needs approval was refused by `onApproval` (or no `onApproval` was given). */
export class ToolApprovalDeniedError extends Error {
  readonly tool: string;

  constructor(tool: string) {
    super(`Calling tool ${tool} was not approved`);
    this.name = "ToolApprovalDeniedError";
    this.tool = tool;
  }
}

/** An HTTP answer that carries no JSON-RPC message: status, headers and the body text. */
export class McpHttpError extends Error {
  readonly status: number;
  readonly headers: Headers;
  readonly body: string;

  constructor(status: number, headers: Headers, body: string) {
    super(`HTTP ${status}${body ? `: ${body.slice(0, 200)}` : ""}`);
    this.name = "McpHttpError";
    this.status = status;
    this.headers = headers;
    this.body = body;
  }
}

/**
 * True for an HTTP 4xx without a JSON-RPC answer, other than 401: the server refused the
 * request as this era or transport sent it. A 401 asks the caller to authenticate first.
 */
export function isHttpRefusal(error: unknown): error is McpHttpError {
  return (
    error instanceof McpHttpError &&
    error.status >= 400 &&
    error.status < 500 &&
    error.status !== 401
  );
}
