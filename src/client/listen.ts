import { isObject } from "../protocol/messages.js";
import { Backoff } from "./backoff.js";
import { ErrorCode, isMcpError, McpHttpError } from "./errors.js";
import { AsyncQueue } from "./queue.js";
import type { Session } from "./session.js";
import type { ListenFilter, ListenOptions, Notification } from "./types.js";

/** An open subscription: iterate it for notifications; `close()` or `break` ends it. */
export interface Subscription extends AsyncIterableIterator<Notification> {
  /** The part of the filter the server honours, once acknowledged; rejects if listening fails. */
  readonly acknowledged: Promise<ListenFilter>;
  close(): void;
}

const TYPES: [keyof ListenFilter, string][] = [
  ["toolsListChanged", "notifications/tools/list_changed"],
  ["promptsListChanged", "notifications/prompts/list_changed"],
  ["resourcesListChanged", "notifications/resources/list_changed"],
  ["eventsListChanged", "notifications/events/list_changed"],
];

/** True when `filter` asks for `notification`. */
export function wants(filter: ListenFilter, notification: Notification): boolean {
  if (notification.method === "notifications/resources/updated") {
    const uri = isObject(notification.params) ? notification.params.uri : undefined;
    return typeof uri === "string" && (filter.resourceSubscriptions ?? []).includes(uri);
  }
  return TYPES.some(([key, method]) => filter[key] === true && notification.method === method);
}

/** Where `listen` hands notifications: to the client's other consumers, and its listeners. */
export interface ListenTarget {
  deliver(notification: Notification): void;
  subscribe(listener: (notification: Notification) => void): () => void;
}

/** Listens in the session's era: {@link listenModern} or {@link listenLegacy}. */
export function listen(
  session: Session,
  filter: ListenFilter,
  target: ListenTarget,
  options: ListenOptions,
): Subscription {
  if (session.era === "modern") {
    return listenModern(session, filter, (change) => target.deliver(change), options);
  }
  return listenLegacy(session, filter, (listener) => target.subscribe(listener), options.signal);
}

function subscription(
  queue: AsyncQueue<Notification>,
  acknowledged: Promise<ListenFilter>,
): Subscription {
  acknowledged.catch(() => {});
  return Object.assign(queue, { acknowledged });
}

/** Marks the notifications `listen` makes up after reconnecting: `params._meta[RESYNC]`. */
const RESYNC = "mcp-mount/resync";

/**
 * A modern `subscriptions/listen` request whose response stream stays open: the first message
 * acknowledges the filter. A stream that drops, or that the server completes (shutdown), is
 * listened to again with backoff; a new stream cannot resume the old one (spec:
 * patterns/subscriptions), so once it is acknowledged every kind the filter asks for is
 * announced as changed ({@link resyncOf}).
 */
export function listenModern(
  session: Session,
  filter: ListenFilter,
  deliver: (notification: Notification) => void,
  options: ListenOptions = {},
): Subscription {
  const backoff = options.reconnect === false ? undefined : new Backoff(options.reconnect);
  const controller = new AbortController();
  const queue = new AsyncQueue<Notification>(() => controller.abort(new Error("listen closed")));
  options.signal?.addEventListener("abort", () => queue.close(), { once: true });
  let acknowledge: (filter: ListenFilter) => void = () => {};
  let refuse: (error: unknown) => void = () => {};
  const acknowledged = new Promise<ListenFilter>((resolve, reject) => {
    acknowledge = resolve;
    refuse = reject;
  });
  const signal = controller.signal;
  let streams = 0;
  const onNotification = (notification: Notification) => {
    if (notification.method !== "notifications/subscriptions/acknowledged") {
      deliver(notification);
      queue.push(notification);
      return;
    }
    backoff?.reset();
    if (streams++ === 0) {
      const honoured = notification.params?.notifications;
      acknowledge((isObject(honoured) ? honoured : {}) as ListenFilter);
      return;
    }
    for (const resync of resyncOf(filter)) {
      deliver(resync);
      queue.push(resync);
    }
  };
  const listenOnce = () =>
    session.request(
      "subscriptions/listen",
      { notifications: { ...filter } },
      { signal, onNotification },
    );
  const follow = async (): Promise<void> => {
    for (;;) {
      let dropped: unknown;
      try {
        await listenOnce();
        // Without reconnection, a completed stream ends the iteration as it always did.
        if (!backoff) return;
      } catch (error) {
        if (signal.aborted) return;
        if (!backoff || !isTransient(error)) throw error;
        dropped = error;
      }
      await backoff.wait(dropped, signal);
    }
  };
  follow().then(
    () => queue.end(),
    (error: unknown) => {
      if (signal.aborted) return queue.end();
      refuse(error);
      queue.end(error);
    },
  );
  return subscription(queue, acknowledged);
}

/** One made-up change notification per kind `filter` asks for, and per subscribed resource. */
export function resyncOf(filter: ListenFilter): Notification[] {
  const params = () => ({ _meta: { [RESYNC]: true } });
  const notifications: Notification[] = TYPES.filter(([key]) => filter[key] === true).map(
    ([, method]) => ({ method, params: params() }),
  );
  for (const uri of filter.resourceSubscriptions ?? []) {
    notifications.push({
      method: "notifications/resources/updated",
      params: { uri, ...params() },
    });
  }
  return notifications;
}

/**
 * True for what a later attempt may fix: a cut or refused connection, a stream that ended
 * early, an HTTP 5xx, 408 or 429, or an internal error. Other JSON-RPC errors (no such method,
 * bad filter) and HTTP 4xx (unauthorized) are answers.
 */
export function isTransient(error: unknown): boolean {
  if (error instanceof McpHttpError)
    return error.status >= 500 || [408, 429].includes(error.status);
  if (isMcpError(error)) return error.code === ErrorCode.InternalError;
  return true;
}

/**
 * The legacy equivalent: notifications the session's GET stream (or stdio) brings, filtered;
 * resources in the filter are subscribed with `resources/subscribe` and unsubscribed on close.
 */
export function listenLegacy(
  session: Session,
  filter: ListenFilter,
  subscribe: (listener: (notification: Notification) => void) => () => void,
  signal?: AbortSignal,
): Subscription {
  const uris = filter.resourceSubscriptions ?? [];
  let unsubscribe = () => {};
  const queue = new AsyncQueue<Notification>(() => {
    unsubscribe();
    for (const uri of uris) void session.request("resources/unsubscribe", { uri }).catch(() => {});
  });
  unsubscribe = subscribe((notification) => {
    if (wants(filter, notification)) queue.push(notification);
  });
  if (signal) signal.addEventListener("abort", () => queue.close(), { once: true });
  const canSubscribe =
    isObject(session.server.capabilities.resources) &&
    session.server.capabilities.resources.subscribe === true;
  const acknowledged = Promise.all(
    canSubscribe ? uris.map((uri) => session.request("resources/subscribe", { uri })) : [],
  ).then(() => {
    const honoured: ListenFilter = { ...filter };
    if (!canSubscribe) delete honoured.resourceSubscriptions;
    return honoured;
  });
  return subscription(queue, acknowledged);
}
