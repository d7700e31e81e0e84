import { EventsMethod, type PollEventsResult } from "../../../protocol/events.js";
import type { JsonObject } from "../../../protocol/messages.js";
import { isTransient } from "../../listen.js";
import { sleep } from "../../sse.js";
import { type OccurrenceStream, startSubscription } from "./occurrence-stream.js";
import { asPollResult } from "./results.js";
import type { EventStreamOptions, EventsHost } from "./types.js";

/** The floor under `nextPollMs` (SEP-3415: clients apply one, 1000 ms by default). */
const MIN_POLL_MS = 1_000;
/** Items waiting for the app beyond which the loop polls no more until it catches up. */
const MAX_BACKLOG = 1_000;

/**
 * A poll subscription: `events/poll` from the cursor, again at once while `hasMore`, else after
 * `nextPollMs` (never sooner than `minPollMs`). A poll that fails for a reason a later one may
 * fix is retried with backoff; any other error (NotFound, Forbidden: how termination reaches
 * poll) ends the iteration with it. An app far behind is waited for before the next poll.
 */
export function pollSubscription(
  host: EventsHost,
  name: string,
  args: JsonObject,
  options: EventStreamOptions,
): OccurrenceStream {
  const { stream, controller, backoff } = startSubscription("poll", options);
  const { signal } = controller;
  const floor = options.minPollMs ?? MIN_POLL_MS;
  const pollOnce = async (cursor: string | null): Promise<PollEventsResult> => {
    const params: JsonObject = { name, arguments: args, cursor };
    if (options.maxAgeMs !== undefined) params.maxAgeMs = options.maxAgeMs;
    if (options.maxEvents !== undefined) params.maxEvents = options.maxEvents;
    return asPollResult(await host.request(EventsMethod.poll, params, { signal }));
  };
  const loop = async (): Promise<void> => {
    // The position polled from: ahead of what the app has taken, which `stream.cursor` is.
    let cursor = options.cursor ?? null;
    for (;;) {
      while (stream.backlog >= MAX_BACKLOG) await sleep(floor, signal);
      let result: PollEventsResult;
      try {
        result = await pollOnce(cursor);
      } catch (error) {
        if (signal.aborted || !backoff || !isTransient(error)) throw error;
        await backoff.wait(error, signal);
        continue;
      }
      backoff?.reset();
      stream.activate();
      if (result.truncated) options.onTruncated?.(result.cursor);
      const last = result.events.length - 1;
      for (const [at, event] of result.events.entries()) {
        stream.deliver(event, at === last ? result.cursor : undefined);
      }
      if (last < 0) stream.mark(result.cursor);
      cursor = result.cursor;
      if (!result.hasMore) await sleep(Math.max(floor, result.nextPollMs), signal);
    }
  };
  loop().catch((error: unknown) => stream.finish(signal.aborted ? undefined : error));
  return stream;
}
