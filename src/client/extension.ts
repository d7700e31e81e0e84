import type { JsonObject } from "../protocol/messages.js";
import type { Era, InputHandlers, RequestOptions } from "./types.js";

/**
 * The request an extension is asked about: what was sent, and what the extension may use to
 * follow it up (more round trips, the `onInput` callbacks, the client's closing).
 */
export interface ExtensionRequest {
  /** The method and params as the caller sent them. */
  readonly method: string;
  readonly params: JsonObject;
  /** The caller's options, with callbacks such as `onTask`. */
  readonly options: RequestOptions;
  /** The era of the client's session. */
  readonly era: Era;
  /** The client's `onInput` callbacks. */
  readonly handlers: InputHandlers;
  /** Aborted when the client closes: follow-ups stop, and the server's work is left to run. */
  readonly closing: AbortSignal;
  /**
   * One more round trip for this request: the caller's timeout and every extension's
   * declaration applied, no progress token, notifications routed as the client's.
   */
  send(method: string, params: JsonObject, signal: AbortSignal | undefined): Promise<JsonObject>;
}

/**
 * The client side of an MCP extension (PROTOCOL §6), registered in `ext/index.ts`: the core
 * asks it what to declare on each request and hands it each result whose `resultType` the
 * core does not know.
 */
export interface ClientExtension {
  /** The identifier negotiated in `capabilities.extensions`. */
  readonly id: string;
  /** Its settings declared on a request of `method` in `era`; undefined declares nothing. */
  declaredOn(method: string, era: Era): JsonObject | undefined;
  /** Follows a result to the caller's answer; undefined when the result is not its own. */
  follow(result: JsonObject, request: ExtensionRequest): Promise<JsonObject> | undefined;
}
