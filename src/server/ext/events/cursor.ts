import { invalidParams } from "../../../protocol/errors.js";
import { isObject } from "../../../protocol/messages.js";
import { fromBase64, fromUtf8, toBase64Url, utf8 } from "../../../utils/base64.js";

/** A feed position as the stores give them out (`<ms>-<n>`, a Redis Stream id). */
const SEQ = /^\d{1,15}-\d{1,15}$/;

/**
 * The cursor of position `seq` in event type `name`'s feed: opaque to clients (SEP-3415,
 * Cursor Lifecycle), the base64url of `{ n, s }`, so a cursor of one event type is refused on
 * another.
 */
export function encodeCursor(name: string, seq: string): string {
  return toBase64Url(utf8(JSON.stringify({ n: name, s: seq })));
}

/**
 * The feed position a client's cursor names; null for an absent or null cursor ("start from
 * now"). A cursor we could not have made, or made for another event type, is InvalidParams:
 * the text names no other error for it, and a stale one is not an error (`truncated`).
 */
export function decodeCursor(name: string, cursor: unknown): string | null {
  if (cursor === undefined || cursor === null) return null;
  let decoded: unknown;
  try {
    if (typeof cursor !== "string") throw new Error("not a string");
    decoded = JSON.parse(fromUtf8(fromBase64(cursor)));
  } catch {
    throw invalidParams("Invalid cursor", { cursor });
  }
  if (!isObject(decoded) || typeof decoded.s !== "string" || !SEQ.test(decoded.s))
    throw invalidParams("Invalid cursor", { cursor });
  if (decoded.n !== name) throw invalidParams(`The cursor is not one of ${name}`, { cursor });
  return decoded.s;
}

/**
 * The position just before `seq`: reading after it starts at `seq` (a fresh cursor from which
 * delivery resumes after a gap).
 */
export function positionBefore(seq: string): string {
  const [ms = 0, n = 0] = seq.split("-").map(Number);
  if (n > 0) return `${ms}-${n - 1}`;
  // The largest sequence number a store accepts in a position (more than a millisecond holds).
  return ms > 0 ? `${ms - 1}-999999999999999` : "0-0";
}
