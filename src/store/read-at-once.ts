import type { SessionRecord, SessionStore, SessionUse } from "./types.js";

/** A session read answered at once, not in a promise. */
export type ReadAtOnce = (id: string, use?: SessionUse) => SessionRecord | undefined;

// Keyed by the `get` function itself: a store wrapped with another `get` (instrumented, failing
// on purpose, spied on) finds nothing here and is read through its wrapper.
const atOnce = new WeakMap<SessionStore["get"], ReadAtOnce>();

/** Says that `read` answers as `get` does, at once: for a store in this process only. */
export function answersAtOnce(get: SessionStore["get"], read: ReadAtOnce): void {
  atOnce.set(get, read);
}

/** The read at once that answers as `get` does, when `get` is an in-process store's own. */
export function readAtOnce(get: SessionStore["get"]): ReadAtOnce | undefined {
  return atOnce.get(get);
}
