import { invalidParams, type McpError } from "../protocol/errors.js";
import type { JsonObject } from "../protocol/messages.js";
import { isLogLevel, type LogLevel } from "../protocol/versions.js";

const SESSION_METHODS = [
  "ping",
  "logging/setLevel",
  "resources/subscribe",
  "resources/unsubscribe",
] as const;

/** A method a legacy session answers itself, from its own state, without the server's handlers. */
export type SessionMethod = (typeof SESSION_METHODS)[number];

/** True for the methods a legacy session answers itself (HTTP legacy and stdio alike). */
export function isSessionMethod(method: string): method is SessionMethod {
  return (SESSION_METHODS as readonly string[]).includes(method);
}

/** What a session method reads of its session: the resources it is subscribed to. */
export interface SessionMethodState {
  subscriptions: Iterable<string>;
}

/** What a session method changes in its session, for the transport to store. */
export type SessionChange = { logLevel: LogLevel } | { subscriptions: string[] };

/** A session method's answer: its result and the change to store, or the error to send. */
export type SessionMethodOutcome =
  | { result: JsonObject; change?: SessionChange }
  | { error: McpError };

/**
 * Answers a legacy session method from `state`, which it leaves alone: the transport stores the
 * change (HTTP in the session record, stdio in its one session). Subscribing or unsubscribing
 * always reports the new list, even when it did not change.
 *
 * @example
 * const outcome = answerSessionMethod("logging/setLevel", { level: "info" }, session);
 * if ("error" in outcome) send(outcome.error);
 * else if (outcome.change) Object.assign(session, outcome.change);
 */
export function answerSessionMethod(
  method: SessionMethod,
  params: JsonObject,
  state: SessionMethodState,
): SessionMethodOutcome {
  switch (method) {
    case "ping":
      return { result: {} };
    case "logging/setLevel":
      if (!isLogLevel(params.level))
        return { error: invalidParams(`Unknown log level: ${String(params.level)}`) };
      return { result: {}, change: { logLevel: params.level } };
    case "resources/subscribe":
    case "resources/unsubscribe": {
      const { uri } = params;
      if (typeof uri !== "string") return { error: invalidParams("uri must be a string") };
      const subscriptions = new Set(state.subscriptions);
      if (method === "resources/subscribe") subscriptions.add(uri);
      else subscriptions.delete(uri);
      return { result: {}, change: { subscriptions: [...subscriptions] } };
    }
  }
}
