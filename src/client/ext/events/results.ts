import type {
  DeliveryStatus,
  EventDescriptor,
  PollEventsResult,
  SubscribeEventsResult,
} from "../../../protocol/events.js";
import { ErrorCode, McpError } from "../../../protocol/errors.js";
import { isObject, type JsonObject } from "../../../protocol/messages.js";
import { isOccurrence } from "./webhook-body.js";

const invalid = (what: string) =>
  new McpError(ErrorCode.InvalidRequest, `The server's ${what} is malformed`);

const isCursor = (value: unknown): value is string | null | undefined =>
  value === undefined || value === null || typeof value === "string";

/** An `events/poll` result, checked: the occurrences, the cursor (absent is null), the advice. */
export function asPollResult(result: JsonObject): PollEventsResult {
  const { events, cursor, nextPollMs } = result;
  if (!Array.isArray(events) || !events.every(isOccurrence) || !isCursor(cursor)) {
    throw invalid("events/poll result");
  }
  return {
    events,
    cursor: cursor ?? null,
    truncated: result.truncated === true,
    hasMore: result.hasMore === true,
    nextPollMs: typeof nextPollMs === "number" && nextPollMs >= 0 ? nextPollMs : 0,
  };
}

/** An `events/subscribe` result, checked. */
export function asSubscribeResult(result: JsonObject): SubscribeEventsResult {
  const { id, refreshBefore, cursor } = result;
  const grant = refreshBefore === null || typeof refreshBefore === "string";
  if (typeof id !== "string" || !grant || !isCursor(cursor)) {
    throw invalid("events/subscribe result");
  }
  const checked: SubscribeEventsResult = {
    id,
    refreshBefore,
    cursor: cursor ?? null,
    truncated: result.truncated === true,
  };
  if (isDeliveryStatus(result.deliveryStatus)) checked.deliveryStatus = result.deliveryStatus;
  return checked;
}

function isDeliveryStatus(value: unknown): value is DeliveryStatus {
  return isObject(value) && typeof value.active === "boolean";
}

/** The entries of an `events/list` page that describe an event type; others are left out. */
export function descriptorsOf(page: JsonObject): EventDescriptor[] {
  const events = Array.isArray(page.events) ? page.events : [];
  return events.filter(
    (entry): entry is EventDescriptor & JsonObject =>
      isObject(entry) &&
      typeof entry.name === "string" &&
      Array.isArray(entry.delivery) &&
      isObject(entry.inputSchema),
  );
}
