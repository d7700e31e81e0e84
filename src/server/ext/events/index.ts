import {
  type DeliveryMode,
  EVENTS_EXTENSION,
  EVENTS_LIST_CHANGED_FLAG,
  EventsMethod,
  eventsError,
} from "../../../protocol/events.js";
import type { JsonObject } from "../../../protocol/messages.js";
import type { EventFeedStore } from "../../../store/types.js";
import type { ExtensionHost, ExtensionRequest, ServerExtension } from "../../extension.js";
import { decodeCursor } from "./cursor.js";
import { type EventsMethodsContext, listEvents, pollEvents } from "./poll.js";
import { openSubscription, type StartPoint, startFrom } from "./reader.js";
import { DEFAULT_RETENTION, eventsOf } from "./registry.js";
import { PushStream } from "./stream.js";
import type { EventsOptions, RegisteredEvent } from "./types.js";
import { Waker } from "./wake.js";
import type { WebhookFactory, WebhookHost, WebhookModule } from "./webhook-module.js";
import { resolveWebhookOptions, type WebhookOptions } from "./webhooks/options.js";

export { eventsOf } from "./registry.js";
export type * from "./types.js";
export type { WebhookFactory, WebhookHost, WebhookModule } from "./webhook-module.js";

/** What the extension needs of its handler (HTTP) or stdio server. */
export type EventsHost = Pick<ExtensionHost, "server" | "store" | "publish" | "onError">;

/** The methods' shared state, and the push streams open in this process. */
interface EventsRuntime extends EventsMethodsContext {
  waker: Waker;
  streams: Set<PushStream>;
  heartbeatMs: number;
  /** Set once the streams were ended (a drain): a stream still starting then ends at once. */
  closing: boolean;
}

/**
 * The `io.modelcontextprotocol/events` extension (SEP-3415) of one handler or stdio server:
 * `events/list`, `events/poll`, `events/stream` and, with `options.webhooks` and a factory,
 * `events/subscribe` and `events/unsubscribe`, over the event types registered with
 * `server.event()` and the store's feeds. Declared (with `listChanged`) once an event type is
 * registered, in both eras; undefined when `options` is false or the store keeps no feeds.
 */
export function eventsExtension(
  host: EventsHost,
  options: EventsOptions | false | undefined,
  webhooks?: WebhookFactory,
): ServerExtension | undefined {
  const feeds = host.store.feeds;
  if (options === false || !feeds) return undefined;
  const registry = eventsOf(host.server);
  const webhookOptions = options?.webhooks || undefined;
  const offers = (event: RegisteredEvent, mode: DeliveryMode) =>
    event.descriptor.delivery.includes(mode) &&
    (mode !== "webhook" || webhookOptions !== undefined);
  const runtime = runtimeOf(host, options ?? {}, feeds, offers);
  const module = webhookOptions
    ? webhookModule(
        { registry, store: host.store, offers, onError: host.onError },
        webhookOptions,
        webhooks,
      )
    : undefined;
  const detach = registry.attach({
    store: host.store,
    retain: { ...DEFAULT_RETENTION, ...options?.retain },
    fanOut: module?.fanOut,
    onError: host.onError,
  });
  const stopListening = registry.onChange(({ name, removed }) => {
    host.publish({ kind: "events" });
    if (!removed) return;
    // SEP-3415, Event type removal: the subscriptions end with NotFound (kind "event").
    for (const stream of runtime.streams) {
      if (stream.name === name) stream.end(eventsError("NotFound", { kind: "event" }));
    }
  });
  const methods = {
    [EventsMethod.list]: (request: ExtensionRequest) => listEvents(runtime, request),
    [EventsMethod.poll]: (request: ExtensionRequest) => pollEvents(runtime, request),
    [EventsMethod.stream]: (request: ExtensionRequest) => streamEvents(runtime, request),
    ...module?.methods,
  };
  const endStreams = () => {
    runtime.closing = true;
    for (const stream of [...runtime.streams]) stream.end();
  };
  return {
    id: EVENTS_EXTENSION,
    legacy: true,
    get declaration() {
      return registry.events.size > 0 ? { listChanged: true } : undefined;
    },
    get listenFlags() {
      return registry.events.size > 0 ? [EVENTS_LIST_CHANGED_FLAG] : [];
    },
    streams: [EventsMethod.stream],
    // Offered while declared: until an event type is registered, events/* is Method not found
    // (SEP-3415, Fallback), as on a server without the extension.
    get methods() {
      return registry.events.size > 0 ? methods : undefined;
    },
    endStreams,
    whenIdle: async (ms) => module?.whenIdle(ms),
    async close() {
      endStreams();
      stopListening();
      detach();
      await Promise.all([runtime.waker.close(), module?.close()]);
    },
  };
}

/**
 * The Node-only webhook module, next to this file. Named by a variable so that neither the Web
 * core's import graph nor a bundler takes it in: it is loaded on first use, only when
 * `events.webhooks` is set (as `rateLimit` loads its limiter), and a runtime without Node's
 * `http` and `dns` fails there, with the error reported, instead of at build time.
 */
const WEBHOOKS_MODULE = "./webhooks/index.js";

async function loadWebhooks(): Promise<WebhookFactory> {
  const loaded: { createWebhooks: WebhookFactory } = await import(
    /* webpackIgnore: true */ /* @vite-ignore */ WEBHOOKS_MODULE
  );
  return loaded.createWebhooks;
}

/**
 * The handler's webhook module: made now by `factory` when one is given, else once the module
 * has loaded (started at once, so the delivery worker runs without waiting for a request);
 * until then its methods and fan-out wait for it. A bad option throws now either way.
 */
function webhookModule(
  host: WebhookHost,
  options: WebhookOptions,
  factory: WebhookFactory | undefined,
): WebhookModule {
  resolveWebhookOptions(options);
  if (factory) return factory(host, options);
  const ready = loadWebhooks().then((create) => create(host, options));
  ready.catch(host.onError);
  const method =
    (name: string) =>
    async (request: ExtensionRequest): Promise<JsonObject> =>
      (await ready).methods[name]!(request);
  return {
    methods: {
      [EventsMethod.subscribe]: method(EventsMethod.subscribe),
      [EventsMethod.unsubscribe]: method(EventsMethod.unsubscribe),
    },
    fanOut: async (ctx, entry) => (await ready).fanOut(ctx, entry),
    whenIdle: async (ms) => (await ready).whenIdle(ms),
    close: () =>
      ready.then(
        (module) => module.close(),
        () => undefined,
      ),
  };
}

function runtimeOf(
  host: EventsHost,
  options: EventsOptions,
  feeds: EventFeedStore,
  offers: EventsMethodsContext["offers"],
): EventsRuntime {
  const positive = (value: number | undefined, fallback: number, name: string) => {
    const chosen = value ?? fallback;
    if (!(chosen > 0)) throw new RangeError(`events.${name} must be positive`);
    return chosen;
  };
  return {
    registry: eventsOf(host.server),
    feeds,
    offers,
    pollIntervalMs: positive(options.pollIntervalMs, 10_000, "pollIntervalMs"),
    maxEvents: positive(options.maxEvents, 100, "maxEvents"),
    heartbeatMs: positive(options.heartbeatMs, 30_000, "heartbeatMs"),
    onError: host.onError,
    waker: new Waker(host.store.bus, host.onError),
    streams: new Set(),
    closing: false,
  };
}

/**
 * `events/stream`: checks the subscription (errors are answered at once, no stream opened),
 * hears its event type's wake-ups before reading where to start (so nothing appended meanwhile
 * is missed), then streams until either side ends it.
 */
async function streamEvents(
  runtime: EventsRuntime,
  request: ExtensionRequest,
): Promise<JsonObject> {
  const subscription = await openSubscription(runtime.registry, request, "push", runtime.offers);
  const name = subscription.event.descriptor.name;
  const cursor = decodeCursor(name, request.params.cursor);
  let stream: PushStream | undefined;
  const stopWaking = await runtime.waker.add(name, () => stream?.wake());
  try {
    const start: StartPoint =
      cursor === null
        ? { position: await runtime.feeds.head(name), truncated: false }
        : await startFrom(runtime.feeds, name, cursor, subscription.maxAgeMs);
    if (request.env.abort.aborted) return {};
    stream = new PushStream(runtime, subscription, request, start);
    runtime.streams.add(stream);
    // Ended while it started (a drain began as it read where to start): it gets its result now.
    if (runtime.closing) stream.end();
    return await stream.done;
  } finally {
    stopWaking();
    if (stream) runtime.streams.delete(stream);
  }
}
