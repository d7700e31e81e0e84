import { isObject } from "../protocol/messages.js";
import { AsyncQueue } from "./queue.js";
import type { Session } from "./session.js";
import type { ListenFilter, Notification } from "./types.js";

/** An open subscription: iterate it for notifications; `close()` or `break` ends it. */
export interface Subscription extends AsyncIterableIterator<Notification> {
  /** Resolves with the part of the filter the server honours, once it acknowledged. */
  readonly acknowledged: Promise<ListenFilter>;
  close(): void;
}

const TYPES: [keyof ListenFilter, string][] = [
  ["toolsListChanged", "notifications/tools/list_changed"],
  ["promptsListChanged", "notifications/prompts/list_changed"],
  ["resourcesListChanged", "notifications/resources/list_changed"],
];

/** True when `filter` asks for `notification`. */
export function wants(filter: ListenFilter, notification: Notification): boolean {
  if (notification.method === "notifications/resources/updated") {
    const uri = isObject(notification.params) ? notification.params.uri : undefined;
    return typeof uri === "string" && (filter.resourceSubscriptions ?? []).includes(uri);
  }
  return TYPES.some(([key, method]) => filter[key] === true && notification.method === method);
}

function subscription(
  queue: AsyncQueue<Notification>,
  acknowledged: Promise<ListenFilter>,
): Subscription {
  acknowledged.catch(() => {});
  return Object.assign(queue, { acknowledged });
}

/**
 * A modern `subscriptions/listen` request whose response stream stays open: the first message
 * acknowledges the filter; the response itself (server shutdown) ends the iteration.
 */
export function listenModern(
  session: Session,
  filter: ListenFilter,
  deliver: (notification: Notification) => void,
  signal?: AbortSignal,
): Subscription {
  const controller = new AbortController();
  const queue = new AsyncQueue<Notification>(() => controller.abort(new Error("listen closed")));
  if (signal) signal.addEventListener("abort", () => queue.close(), { once: true });
  let acknowledge: (filter: ListenFilter) => void = () => {};
  const acknowledged = new Promise<ListenFilter>((resolve) => (acknowledge = resolve));
  session
    .request(
      "subscriptions/listen",
      { notifications: { ...filter } },
      {
        signal: controller.signal,
        onNotification(notification) {
          if (notification.method === "notifications/subscriptions/acknowledged") {
            const honoured = notification.params?.notifications;
            acknowledge((isObject(honoured) ? honoured : {}) as ListenFilter);
            return;
          }
          deliver(notification);
          queue.push(notification);
        },
      },
    )
    .then(
      () => queue.end(),
      (error: unknown) => queue.end(controller.signal.aborted ? undefined : error),
    );
  return subscription(queue, acknowledged);
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
