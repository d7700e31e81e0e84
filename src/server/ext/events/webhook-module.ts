import type { DeliveryMode } from "../../../protocol/events.js";
import type { JsonObject } from "../../../protocol/messages.js";
import type { McpStore } from "../../../store/types.js";
import type { ExtensionRequest } from "../../extension.js";
import type { EventTypes, RegisteredEvent, WebhookFanout } from "./types.js";
import type { WebhookOptions } from "./webhooks/options.js";

/** What the events extension of a handler lends its webhook module. */
export interface WebhookHost {
  /** The server's event types (and their changes: a removed one terminates its webhooks). */
  registry: EventTypes;
  store: McpStore;
  /** Whether this handler serves `mode` for `event` (webhook is served once the module is on). */
  offers(event: RegisteredEvent, mode: DeliveryMode): boolean;
  onError(error: unknown): void;
}

/**
 * The webhook module of one handler with `events.webhooks` set: its two methods, the fan-out
 * `emit` calls after each append to this handler's store, and its worker's drain and stop.
 */
export interface WebhookModule {
  /** `events/subscribe` and `events/unsubscribe`. */
  methods: Readonly<Record<string, (request: ExtensionRequest) => Promise<JsonObject>>>;
  /** Enqueues the deliveries an appended occurrence owes (`enqueueDeliveries`). */
  fanOut: WebhookFanout;
  /** Resolves once this process's deliveries in flight are done, or after `ms` (a drain). */
  whenIdle(ms: number): Promise<void>;
  /** Stops the delivery worker (the handler closes). */
  close(): Promise<void>;
}

/** Builds a handler's webhook module: `createWebhooks` of `./webhooks/index.ts`. */
export type WebhookFactory = (host: WebhookHost, options: WebhookOptions) => WebhookModule;
