import { legacyHeaders } from "./legacy.js";
import { modernHeaders, modernMeta, parseSse } from "./modern.js";
import { assertLegacyMessage, assertModernMessage } from "./spec.js";
import { SseReader } from "./stream.js";

// Clients for the fleet tests (failover, six processes): calls that retry what the server marks
// retryable and count what happened, and holders of listen and GET streams that count the list
// changes they hear and come back when their stream ends. Every wait is bounded.

/** What the calls saw. A call is lost when it ended without success; hung when a wait ran out. */
export interface CallTally {
  sent: number;
  succeeded: number;
  /** Attempts answered 503, or with a JSON-RPC error marked retryable, then retried. */
  retried: number;
  hung: number;
  /** Attempts whose connection was cut (fetch threw), then retried. */
  reset: number;
  lost: number;
  /** What each lost or hung call saw last. */
  failures: string[];
}

/** A fresh tally. */
export function createTally(): CallTally {
  return { sent: 0, succeeded: 0, retried: 0, hung: 0, reset: 0, lost: 0, failures: [] };
}

/** Options of {@link createFleetClient}. */
export interface FleetClientOptions {
  /** One attempt that takes longer than this has hung. @default 15_000 */
  attemptMs?: number;
  /** A call still refused (retryably) after this is lost. @default 45_000 */
  callMs?: number;
}

let nextId = 1;
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function isRetryable(message: Record<string, unknown> | undefined): boolean {
  const error = message?.error as { data?: { retryable?: boolean } } | undefined;
  return error?.data?.retryable === true;
}

/** The JSON-RPC messages of a complete response body, JSON or SSE. */
function messagesOf(response: Response, text: string): Record<string, unknown>[] {
  if (response.headers.get("content-type")?.startsWith("text/event-stream"))
    return parseSse(text) as Record<string, unknown>[];
  return text ? [JSON.parse(text) as Record<string, unknown>] : [];
}

/** Calls through `url`, retrying what is retryable, counting into `tally`. */
export function createFleetClient(url: string, tally: CallTally, options: FleetClientOptions = {}) {
  const attemptMs = options.attemptMs ?? 15_000;
  const callMs = options.callMs ?? 45_000;

  /** One call: `attempt` sends it once and says what came back. */
  async function retrying(
    what: string,
    attempt: (signal: AbortSignal) => Promise<{ status: number; final?: Record<string, unknown> }>,
  ): Promise<boolean> {
    tally.sent++;
    const deadline = Date.now() + callMs;
    let last = "";
    while (Date.now() < deadline) {
      const signal = AbortSignal.timeout(attemptMs);
      let outcome: { status: number; final?: Record<string, unknown> };
      try {
        outcome = await attempt(signal);
      } catch (error) {
        if (signal.aborted) {
          tally.hung++;
          tally.failures.push(`${what}: hung (${String(error)})`);
          return false;
        }
        // A connection cut under the request (the proxy's backend went away): retry.
        last = String(error);
        tally.reset++;
        await pause(100);
        continue;
      }
      const { status, final } = outcome;
      last = `${status} ${JSON.stringify(final)?.slice(0, 200)}`;
      if (status === 503 || isRetryable(final)) {
        tally.retried++;
        await pause(100);
        continue;
      }
      if (status === 200 && final?.result) {
        tally.succeeded++;
        return true;
      }
      break;
    }
    tally.lost++;
    tally.failures.push(`${what}: ${last}`);
    return false;
  }

  return {
    /** A modern tools/call. */
    modern(name: string, args: Record<string, unknown> = {}): Promise<boolean> {
      return retrying(`modern ${name}`, async (signal) => {
        const id = nextId++;
        const response = await fetch(url, {
          method: "POST",
          headers: modernHeaders("tools/call", name),
          body: JSON.stringify({
            jsonrpc: "2.0",
            id,
            method: "tools/call",
            params: { name, arguments: args, _meta: modernMeta() },
          }),
          signal,
        });
        const messages = messagesOf(response, await response.text());
        for (const message of messages) assertModernMessage(message, "tools/call");
        return { status: response.status, final: messages.find((m) => m.id === id) };
      });
    },
    /** A legacy tools/call in `session`. */
    legacy(session: string, name: string, args: Record<string, unknown> = {}): Promise<boolean> {
      return retrying(`legacy ${name}`, async (signal) => {
        const id = nextId++;
        const response = await fetch(url, {
          method: "POST",
          headers: legacyHeaders(session),
          body: JSON.stringify({
            jsonrpc: "2.0",
            id,
            method: "tools/call",
            params: { name, arguments: args },
          }),
          signal,
        });
        const messages = messagesOf(response, await response.text());
        for (const message of messages) assertLegacyMessage(message, "tools/call");
        return { status: response.status, final: messages.find((m) => m.id === id) };
      });
    },
  };
}

/** What a stream holder heard. */
export interface Heard {
  /** List changes heard. */
  count: number;
  /** Whether its stream is open now. */
  open: boolean;
  /** Times its stream ended and it opened another. */
  reopened: number;
}

/** A holder that hears nothing yet. */
export function createHeard(): Heard {
  return { count: 0, open: false, reopened: 0 };
}

/** Holds a stream open while `holding()`; stops within a second once it does not. */
async function hold(
  open: (lastEventId: string | undefined) => Promise<Response | undefined>,
  heard: Heard,
  holding: () => boolean,
  check: (message: Record<string, unknown>) => void,
): Promise<void> {
  let lastEventId: string | undefined;
  while (holding()) {
    const response = await open(lastEventId).catch(() => undefined);
    if (response?.status !== 200 || !response.body) {
      await response?.text().catch(() => undefined);
      await pause(100);
      continue;
    }
    const reader = new SseReader(response.body);
    for (;;) {
      const message = await reader.next(1_000);
      lastEventId = reader.lastEventId ?? lastEventId;
      // Open once it spoke: a listen stream's acknowledgement, a GET stream's priming event.
      if (message || reader.lastEventId) heard.open = true;
      if (!holding()) {
        await reader.cancel();
        return;
      }
      if (!message && reader.ended) break;
      if (!message) continue;
      check(message);
      if (message.method === "notifications/tools/list_changed") heard.count++;
    }
    heard.open = false;
    heard.reopened++;
  }
}

/** Holds a modern `subscriptions/listen` stream at `url`, opening another when it ends. */
export function holdListen(url: string, heard: Heard, holding: () => boolean): Promise<void> {
  const open = () =>
    fetch(url, {
      method: "POST",
      headers: modernHeaders("subscriptions/listen"),
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: nextId++,
        method: "subscriptions/listen",
        params: { notifications: { toolsListChanged: true }, _meta: modernMeta() },
      }),
    });
  return hold(open, heard, holding, (message) =>
    assertModernMessage(message, "subscriptions/listen"),
  );
}

/** Holds a legacy GET stream of `session` at `url`, resuming it with Last-Event-ID when it ends. */
export function holdGet(
  url: string,
  session: string,
  heard: Heard,
  holding: () => boolean,
): Promise<void> {
  const open = (lastEventId: string | undefined) => {
    const headers: Record<string, string> = {
      ...legacyHeaders(session),
      accept: "text/event-stream",
    };
    if (lastEventId) headers["last-event-id"] = lastEventId;
    return fetch(url, { headers });
  };
  return hold(open, heard, holding, (message) => assertLegacyMessage(message, ""));
}
