/** JSON-RPC and MCP error codes this package puts on the wire (PROTOCOL §7). */
export const ErrorCode = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
  /** Legacy era only: modern servers answer an unknown resource with InvalidParams. */
  ResourceNotFound: -32002,
  HeaderMismatch: -32020,
  MissingRequiredClientCapability: -32021,
  UnsupportedProtocolVersion: -32022,
  UrlElicitationRequired: -32042,
  /**
   * Over the caller's rate limit (HTTP 429). MCP names no code for it; this is JSON-RPC's
   * established "limit exceeded" (EIP-1474), in the range left to implementations.
   */
  RateLimited: -32005,
} as const;

/** One of the numeric codes in {@link ErrorCode}. */
export type ErrorCodeValue = (typeof ErrorCode)[keyof typeof ErrorCode];

/**
 * An error that crosses the wire as a JSON-RPC error object. Thrown by a tool handler it answers
 * the call with that error, where any other throw becomes a tool result with `isError`.
 *
 * @example
 * ```ts
 * import { ErrorCode, McpError } from "mcp-mount";
 *
 * const notes = new Map([["1", "Buy milk"]]);
 * server.tool({ name: "read_note" }, (args) => {
 *   const note = notes.get(String(args.id));
 *   if (note === undefined) throw new McpError(ErrorCode.InvalidParams, `No note ${args.id}`);
 *   return note;
 * });
 * ```
 */
export class McpError extends Error {
  readonly code: number;
  readonly data: unknown;

  constructor(code: number, message: string, data?: unknown) {
    super(message);
    this.name = "McpError";
    this.code = code;
    this.data = data;
  }

  /** The JSON-RPC `error` member for this error. */
  toJSON(): { code: number; message: string; data?: unknown } {
    return this.data === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, data: this.data };
  }
}

/** True when `value` is an {@link McpError} (also across bundle copies). */
export function isMcpError(value: unknown): value is McpError {
  return (
    value instanceof McpError ||
    (value instanceof Error &&
      value.name === "McpError" &&
      typeof (value as McpError).code === "number")
  );
}

/** Shorthand for an InvalidParams error. */
export function invalidParams(message: string, data?: unknown): McpError {
  return new McpError(ErrorCode.InvalidParams, message, data);
}
