import { ErrorCode, isMcpError, McpError } from "../../protocol/errors.js";

/**
 * The error of a request the upstream could not serve for now (down, restarting, stopping):
 * InternalError with `data.retryable`, so a client knows the same request may succeed later.
 */
export function retryableError(message: string, cause?: unknown): McpError {
  const error = new McpError(ErrorCode.InternalError, message, { retryable: true });
  if (cause !== undefined) error.cause = cause;
  return error;
}

/** True for an error {@link retryableError} made, or any `McpError` saying `retryable`. */
export function isRetryable(error: unknown): boolean {
  if (!isMcpError(error)) return false;
  const data = error.data;
  return (
    typeof data === "object" && data !== null && "retryable" in data && data.retryable === true
  );
}

/** The message of anything thrown. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
