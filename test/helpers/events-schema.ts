import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Ajv2020 } from "ajv/dist/2020.js";
import { assertLegacyMessage, assertModernMessage } from "./spec.js";

/**
 * The Events extension's JSON Schema, written from SEP-3415 (test/fixtures/events.schema.json):
 * `assertEventsSchema("PollEventsResult", result)`. The spec repository publishes none.
 */
const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
ajv.addSchema(
  JSON.parse(
    readFileSync(fileURLToPath(new URL("../fixtures/events.schema.json", import.meta.url)), "utf8"),
  ),
);

/** Throws unless `value` matches definition `def` of the events schema. */
export function assertEventsSchema(def: string, value: unknown): void {
  const validate = ajv.getSchema(`events#/$defs/${def}`);
  if (!validate) throw new Error(`No definition ${def} in events.schema.json`);
  if (!validate(value)) {
    const errors = (validate.errors ?? []).slice(0, 5).map((e) => `${e.instancePath} ${e.message}`);
    throw new Error(
      `events#${def} rejected ${JSON.stringify(value).slice(0, 400)}: ${errors.join("; ")}`,
    );
  }
}

/** The definition each events method's result must match. */
export const EVENTS_RESULTS: Record<string, string> = {
  "events/list": "ListEventsResult",
  "events/poll": "PollEventsResult",
  "events/stream": "StreamEventsResult",
  "events/subscribe": "SubscribeEventsResult",
  "events/unsubscribe": "UnsubscribeEventsResult",
};

/** The definition each events notification must match. */
export const EVENTS_NOTIFICATIONS: Record<string, string> = {
  "notifications/events/list_changed": "EventsListChangedNotification",
  "notifications/events/active": "EventsActiveNotification",
  "notifications/events/event": "EventsEventNotification",
  "notifications/events/heartbeat": "EventsHeartbeatNotification",
  "notifications/events/error": "EventsErrorNotification",
  "notifications/events/terminated": "EventsTerminatedNotification",
};

/**
 * Throws unless a message the server sent about events matches the schema: a notification by
 * its method, a result by the method of the request it answers, an error as the extension's.
 */
export function assertEventsMessage(message: Record<string, unknown>, method?: string): void {
  if (typeof message.method === "string") {
    const def = EVENTS_NOTIFICATIONS[message.method];
    if (!def) throw new Error(`Not an events notification: ${message.method}`);
    assertEventsSchema(def, message);
  } else if ("error" in message) {
    assertEventsSchema("EventsErrorResponse", message);
  } else {
    const def = method === undefined ? undefined : EVENTS_RESULTS[method];
    if (!def) throw new Error(`No result schema for ${method}`);
    assertEventsSchema(def, message.result);
  }
}

/**
 * Validates a message the server sent in an era: an events notification or result against the
 * events schema, and everything against the era's own schema where it knows the message (a
 * result's shape and `resultType`, which modern results carry and legacy ones must not).
 */
export function assertEventsEra(
  era: "modern" | "legacy",
  message: Record<string, unknown>,
  method: string,
): void {
  const notified = typeof message.method === "string" ? message.method : undefined;
  const ours = notified
    ? notified.startsWith("notifications/events/")
    : method.startsWith("events/");
  if (ours) assertEventsMessage(message, method);
  if (notified && ours) return;
  if (era === "modern") assertModernMessage(message, method);
  else assertLegacyMessage(message, method);
}
