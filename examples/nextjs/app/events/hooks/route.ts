import { createEventsReceiver, type EventOccurrence } from "mcp-mount/events/receiver";

// Per process, for the demo: a real app keeps what it receives in its database or a queue.
const received: (EventOccurrence & { subscriptionId: string })[] = [];

/**
 * A webhook receiver for Events: verifies each delivery's Standard Webhooks signature with the
 * secret the subscription was made with (here one, `WEBHOOK_SECRET`, read per request: `next
 * build` runs without it), and keeps the occurrences it accepts.
 */
export const POST = createEventsReceiver({
  secrets: () => process.env.WEBHOOK_SECRET,
  onEvent: (event, { subscriptionId }) => {
    received.push({ ...event, subscriptionId });
  },
});

/** What this process has received, newest last (for the demo and its test). */
export const GET = () => Response.json({ received });
