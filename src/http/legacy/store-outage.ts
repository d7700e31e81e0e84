import { ErrorCode, McpError } from "../../protocol/errors.js";
import type { RequestId } from "../../protocol/messages.js";
import { errorResponse } from "../responses.js";
import type { McpHttpResponse } from "../types.js";

/** A session-store operation failed: Redis down, most likely. */
export class StoreUnavailable extends Error {
  constructor(readonly cause: unknown) {
    super("Session store unavailable");
  }
}

/** Awaits a store operation, marking its failure so the request gets 503 rather than a 500. */
export async function fromStore<T>(operation: Promise<T>): Promise<T> {
  try {
    return await operation;
  } catch (error) {
    throw new StoreUnavailable(error);
  }
}

/** Runs `serve`, answering 503 with Retry-After when it met a store failure. */
export async function answer503OnStoreOutage(
  serve: () => Promise<McpHttpResponse>,
  onError: (error: unknown) => void,
  id?: RequestId,
): Promise<McpHttpResponse> {
  try {
    return await serve();
  } catch (error) {
    return storeOutage(error, onError, id);
  }
}

/** The 503 with Retry-After for a store failure (reported); any other error is thrown again. */
export function storeOutage(
  error: unknown,
  onError: (error: unknown) => void,
  id?: RequestId,
): McpHttpResponse {
  if (!(error instanceof StoreUnavailable)) throw error;
  onError(error.cause);
  const unavailable = new McpError(
    ErrorCode.InternalError,
    "Session store unavailable, retry shortly",
  );
  return errorResponse(503, unavailable, { id, headers: { "retry-after": "1" } });
}
