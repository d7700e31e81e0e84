import type { McpClient } from "../client/index.js";
import type { JsonObject } from "../protocol/messages.js";
import { type Output, printMessage, printOutput } from "./terminal.js";

/** What `mcp-mount events <server>` prints: each event type, its delivery modes and description. */
export async function listEventTypes(client: McpClient, json: boolean): Promise<Output> {
  const events = await client.events();
  if (json) return { json: events };
  if (events.length === 0) return { text: "No event types (the server does not offer Events)" };
  const lines = [`Event types (${events.length})`];
  for (const event of events) {
    const modes = `[${event.delivery.join(", ")}]`;
    lines.push(
      event.description
        ? `  ${event.name} ${modes} — ${event.description}`
        : `  ${event.name} ${modes}`,
    );
  }
  return { text: lines.join("\n") };
}

/** What `--follow` asks for. */
export interface FollowRequest {
  name: string;
  args: JsonObject;
  /** The mode asked for; push when the event type offers it, else poll. */
  delivery: "poll" | "push" | undefined;
  /** Ends following (Ctrl-C). */
  signal: AbortSignal;
}

/**
 * Follows an event type from now, printing each occurrence as JSON on stdout (controls
 * escaped) and what happens to the subscription on stderr, until `signal` aborts.
 */
export async function followEvents(client: McpClient, request: FollowRequest): Promise<void> {
  const { name, args, delivery, signal } = request;
  const subscription = await client.subscribeEvents(name, args, {
    ...(delivery ? { delivery } : {}),
    signal,
    onTruncated: () => printMessage("note: events were skipped (truncated)"),
    onError: (error) => printMessage(`note: the server reported ${error.message} (${error.code})`),
  });
  printMessage(`following ${name} by ${subscription.delivery}; Ctrl-C to stop`);
  try {
    for await (const event of subscription) printOutput({ json: event });
  } catch (error) {
    if (!signal.aborted) throw error;
  }
}
