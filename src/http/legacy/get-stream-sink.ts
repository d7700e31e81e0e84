import type { JsonRpcMessage } from "../../protocol/messages.js";
import type { ChangeSink, OutgoingChange } from "../../server/listen-hub.js";
import type { ChangeEvent } from "../../server/mcp-server.js";
import type { LegacyStream } from "./stream.js";

/** What a GET stream's sink reads of its session (a HeldSession). */
export interface SinkOwner {
  readonly standalone: LegacyStream | undefined;
  wants(event: ChangeEvent): boolean;
}

const NO_SUBSCRIPTIONS: ReadonlySet<string> = new Set();

/** A session's resource subscriptions as a set; most have none, and share one empty set. */
export function subscriptionSet(uris: Iterable<string>): ReadonlySet<string> {
  // A session's record holds an array: an empty one makes no set at all.
  if (Array.isArray(uris) && uris.length === 0) return NO_SUBSCRIPTIONS;
  const set = new Set(uris);
  return set.size === 0 ? NO_SUBSCRIPTIONS : set;
}

/** The change sink of a session's GET stream: one small object, its methods on the prototype. */
export class GetStreamSink implements ChangeSink {
  readonly #held: SinkOwner;

  constructor(held: SinkOwner) {
    this.#held = held;
  }

  wants(event: ChangeEvent): boolean {
    return this.#held.wants(event);
  }

  deliver(message: JsonRpcMessage, change: OutgoingChange): void {
    this.#held.standalone?.send(message, change.json, change.eid);
  }

  keepAlive(): void {
    this.#held.standalone?.keepAlive();
  }

  end(): void {
    this.#held.standalone?.end();
  }
}
