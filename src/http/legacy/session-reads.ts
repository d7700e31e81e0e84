import type { SessionRecord } from "../../store/types.js";
import { isThenable } from "../../utils/thenable.js";
import type { Presence } from "./presence.js";
import type { SessionActivity } from "./session-activity.js";
import type { SessionCache } from "./session-cache.js";
import { StoreUnavailable } from "./store-outage.js";

/** How a request reads its session: `keep` caches it, `holds` marks it active in the read. */
export interface SessionRead {
  keep?: boolean;
  client?: string | undefined;
  holds?: boolean;
}

/** A session, or its read when that takes an async step. */
export type Found = SessionRecord | undefined | Promise<SessionRecord | undefined>;

/**
 * Reads sessions for requests: through the cache, marking a session active for a request that
 * will hold it (see {@link SessionActivity}), and answering only its own principal. The memory
 * store's own `get` is answered at once (see read-at-once.ts), other reads in a promise; so is
 * a marking read made before this process is known to be present, which waits for that.
 */
export class SessionReads {
  readonly #cache: SessionCache;
  readonly #activity: SessionActivity;
  readonly #presence: Presence;

  constructor(cache: SessionCache, activity: SessionActivity, presence: Presence) {
    this.#cache = cache;
    this.#activity = activity;
    this.#presence = presence;
  }

  find(sessionId: string, principal: string, request: SessionRead = {}): Found {
    const { keep = true, client, holds = false } = request;
    const use = { client, activeFor: holds ? this.#presence.processId : undefined };
    if (holds) this.#activity.reading(sessionId);
    let reading: Found;
    try {
      reading = this.#cache.get(sessionId, keep, use);
    } catch (error) {
      this.#failed(sessionId, holds, error);
    }
    // A mark counts only while its owner is present: the first one waits for the presence.
    if (isThenable(reading) || (holds && !this.#presence.known))
      return this.#later(sessionId, principal, holds, reading);
    return this.#owned(sessionId, principal, holds, reading);
  }

  async #later(
    sessionId: string,
    principal: string,
    holds: boolean,
    reading: Found,
  ): Promise<SessionRecord | undefined> {
    let record: SessionRecord | undefined;
    try {
      record =
        holds && !this.#presence.known
          ? (await Promise.all([reading, this.#presence.ensure()]))[0]
          : await reading;
    } catch (error) {
      this.#failed(sessionId, holds, error);
    }
    return this.#owned(sessionId, principal, holds, record);
  }

  /** A read that failed: its mark no longer pending, and the store's outage for the caller. */
  #failed(sessionId: string, holds: boolean, error: unknown): never {
    if (holds) this.#activity.readFailed(sessionId);
    throw new StoreUnavailable(error);
  }

  /** The record if the principal's; a marking read that found none says so. */
  #owned(
    sessionId: string,
    principal: string,
    holds: boolean,
    record: SessionRecord | undefined,
  ): SessionRecord | undefined {
    // Another principal presenting the id gets the same answer as an unknown session (§5).
    const found = record?.principal === principal ? record : undefined;
    if (holds && found === undefined) this.#activity.readFailed(sessionId);
    return found;
  }
}
