import {
  type EventOccurrence,
  EventsMethod,
  EventsNotification,
  SUBSCRIPTION_ID_META,
} from "../../../protocol/events.js";
import { McpError } from "../../../protocol/errors.js";
import { isObject, type JsonObject } from "../../../protocol/messages.js";
import { isTransient } from "../../listen.js";
import { IdleTimeout } from "../../timeout.js";
import type { Notification } from "../../types.js";
import { type OccurrenceStream, startSubscription } from "./occurrence-stream.js";
import type { EventStreamOptions, EventsHost } from "./types.js";
import { isEventsError, isOccurrence } from "./webhook-body.js";

/** Twice the 30 s heartbeat SEP-3415 asks servers for, and some slack. */
const HEARTBEAT_TIMEOUT_MS = 70_000;

/** How one stream ended: the server closed it, it went silent, or it was terminated. */
type StreamEnd = { kind: "closed" } | { kind: "silent" } | { kind: "terminated"; error: McpError };

/**
 * A push subscription: an `events/stream` request held open (no request timeout: its heartbeat
 * is the liveness signal), opened again from the latest cursor when it drops, when the server
 * closes it, or when it stays silent past `heartbeatTimeoutMs` (SEP-3415, push lifecycle).
 * `notifications/events/terminated` ends the iteration with its error; so does an error
 * answering the request (NotFound, Forbidden, Unsupported). Closing aborts the request: on
 * HTTP that closes the stream, on stdio it sends `notifications/cancelled`.
 */
export function pushSubscription(
  host: EventsHost,
  name: string,
  args: JsonObject,
  options: EventStreamOptions,
): OccurrenceStream {
  const { stream, controller, backoff } = startSubscription("push", options);
  const { signal } = controller;
  const position = { cursor: options.cursor ?? null };
  const loop = async (): Promise<void> => {
    for (;;) {
      let dropped: unknown;
      try {
        const live = () => backoff?.reset();
        const state = { name, args, options, stream, position, signal, live };
        const end = await openStream(host, state);
        if (end.kind === "terminated") throw new Terminated(end.error);
        dropped = new Error(
          `The events/stream ${end.kind === "silent" ? "went silent" : "closed"}`,
        );
      } catch (error) {
        if (signal.aborted || error instanceof Terminated) throw error;
        if (!isTransient(error)) throw error;
        dropped = error;
      }
      if (!backoff) throw dropped;
      await backoff.wait(dropped, signal);
    }
  };
  loop().catch((error: unknown) =>
    stream.finish(signal.aborted ? undefined : error instanceof Terminated ? error.error : error),
  );
  return stream;
}

/** A terminated subscription's error, carried past the loop's reconnection. */
class Terminated extends Error {
  readonly error: McpError;
  constructor(error: McpError) {
    super(error.message);
    this.error = error;
  }
}

interface StreamState {
  name: string;
  args: JsonObject;
  options: EventStreamOptions;
  stream: OccurrenceStream;
  /** The latest cursor received: where a new stream starts. */
  position: { cursor: string | null };
  signal: AbortSignal;
  /** The stream is confirmed (`active`): the reconnection attempts in a row start again. */
  live(): void;
}

/** Holds one `events/stream` until it ends, feeding its notifications to the stream. */
async function openStream(host: EventsHost, state: StreamState): Promise<StreamEnd> {
  const { options, position } = state;
  const attempt = new AbortController();
  const silence = new IdleTimeout(options.heartbeatTimeoutMs ?? HEARTBEAT_TIMEOUT_MS);
  let terminated: McpError | undefined;
  const params: JsonObject = { name: state.name, arguments: state.args, cursor: position.cursor };
  if (options.maxAgeMs !== undefined) params.maxAgeMs = options.maxAgeMs;
  const onNotification = (notification: Notification) => {
    silence.touch();
    const ended = handle(notification, state);
    if (ended) {
      terminated = ended;
      attempt.abort(ended);
    }
  };
  const signal = AbortSignal.any([state.signal, attempt.signal, silence.signal]);
  try {
    await host.request(EventsMethod.stream, params, { signal, timeoutMs: 0, onNotification });
    return { kind: "closed" };
  } catch (error) {
    if (terminated) return { kind: "terminated", error: terminated };
    if (silence.signal.aborted && !state.signal.aborted) return { kind: "silent" };
    throw error;
  } finally {
    silence.clear();
  }
}

/** Applies one notification of the stream; returns the error of a `terminated`. */
function handle(notification: Notification, state: StreamState): McpError | undefined {
  const params = notification.params ?? {};
  const { stream, position, options } = state;
  switch (notification.method) {
    case EventsNotification.active: {
      stream.activate();
      state.live();
      position.cursor = cursorOf(params.cursor);
      if (params.truncated === true) options.onTruncated?.(position.cursor);
      stream.mark(position.cursor);
      return undefined;
    }
    case EventsNotification.event: {
      if (!isOccurrence(params)) return undefined;
      const event = withoutSubscriptionId(params);
      if ("cursor" in params) position.cursor = cursorOf(params.cursor);
      stream.deliver(event, "cursor" in params ? position.cursor : undefined);
      return undefined;
    }
    case EventsNotification.heartbeat: {
      position.cursor = cursorOf(params.cursor);
      stream.mark(position.cursor);
      return undefined;
    }
    case EventsNotification.error:
      if (isEventsError(params.error)) options.onError?.(params.error);
      return undefined;
    case EventsNotification.terminated: {
      const error = isEventsError(params.error)
        ? params.error
        : { code: -32603, message: "Terminated" };
      return new McpError(error.code, error.message, error.data);
    }
    default:
      return undefined;
  }
}

const cursorOf = (value: unknown): string | null => (typeof value === "string" ? value : null);

/** The occurrence as the app sees it: the stream's routing key left out of `_meta`. */
function withoutSubscriptionId(event: EventOccurrence): EventOccurrence {
  if (!isObject(event._meta)) return event;
  const { [SUBSCRIPTION_ID_META]: _routing, ...meta } = event._meta;
  const { _meta: _dropped, ...rest } = event;
  return Object.keys(meta).length > 0 ? { ...rest, _meta: meta } : rest;
}
