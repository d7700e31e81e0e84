import type { EventOccurrence, EventsErrorObject } from "../../../protocol/events.js";
import { isObject } from "../../../protocol/messages.js";

/** Events were skipped between refreshes: persist `cursor`, treat it as `truncated: true`. */
export interface GapEnvelope {
  type: "gap";
  cursor: string | null;
}

/** The subscription ended on the server (access revoked, event type removed). */
export interface TerminatedEnvelope {
  type: "terminated";
  error: EventsErrorObject;
}

/** What a verified webhook body is (SEP-3415, non-event webhook bodies). */
export type Envelope =
  | { type: "event"; event: EventOccurrence }
  | GapEnvelope
  | TerminatedEnvelope
  | { type: "verification"; challenge: string }
  | { type: "other" };

/** True for an EventOccurrence's required fields. */
export function isOccurrence(value: unknown): value is EventOccurrence {
  return (
    isObject(value) &&
    typeof value.eventId === "string" &&
    typeof value.name === "string" &&
    typeof value.timestamp === "string" &&
    isObject(value.data) &&
    (value.cursor === undefined || value.cursor === null || typeof value.cursor === "string")
  );
}

/** True for a JSON-RPC error object. */
export function isEventsError(value: unknown): value is EventsErrorObject {
  return isObject(value) && typeof value.code === "number" && typeof value.message === "string";
}

/**
 * A webhook body: a top-level `type` makes it a control envelope, else it is an occurrence;
 * undefined for a body that is neither (not JSON, fields missing). A control type this
 * receiver does not know is `other`, acknowledged and ignored.
 */
export function parseDelivery(body: Uint8Array): Envelope | undefined {
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(body));
  } catch {
    return undefined;
  }
  if (!isObject(value)) return undefined;
  if (value.type === undefined)
    return isOccurrence(value) ? { type: "event", event: value } : undefined;
  if (value.type === "verification") {
    return typeof value.challenge === "string"
      ? { type: "verification", challenge: value.challenge }
      : undefined;
  }
  if (value.type === "gap") {
    const cursor = value.cursor ?? null;
    return cursor === null || typeof cursor === "string" ? { type: "gap", cursor } : undefined;
  }
  if (value.type === "terminated") {
    return isEventsError(value.error) ? { type: "terminated", error: value.error } : undefined;
  }
  return typeof value.type === "string" ? { type: "other" } : undefined;
}
