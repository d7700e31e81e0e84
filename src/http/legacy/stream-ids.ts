import type { RequestId } from "../../protocol/messages.js";
import { fromBase64, fromUtf8, toBase64Url, utf8 } from "../../utils/base64.js";

// An SSE event id is `<stream id>.<counter>`: the stream it belongs to, and its place in it.

/** Separates a stream id from the event counter inside an SSE event id. */
const SEPARATOR = ".";
/** The counter of the marker event that records the end of a stream in its log. */
const END = "end";

/** The id of event `seq` of stream `streamId`. */
export function eventId(streamId: string, seq: number): string {
  return `${streamId}${SEPARATOR}${seq}`;
}

/** The id of the marker that records the end of stream `streamId` in its log. */
export function endMarkerId(streamId: string): string {
  return `${streamId}${SEPARATOR}${END}`;
}

/** True for the id of a stream's end marker. */
export function isEndMarker(id: string): boolean {
  return id.endsWith(`${SEPARATOR}${END}`);
}

/** The stream an SSE event id belongs to. */
export function streamOfEventId(id: string): string | undefined {
  const at = id.lastIndexOf(SEPARATOR);
  return at > 0 ? id.slice(0, at) : undefined;
}

/** The counter of an SSE event id (NaN for an end marker or a foreign id). */
export function seqOf(id: string): number {
  return Number(id.slice(id.lastIndexOf(SEPARATOR) + 1));
}

/** Longest request id carried in a stream id (longer ones are not carried). */
const MAX_CARRIED_ID = 96;
/** Separates the parts of a POST stream id; in neither hex nor base64url. */
const PART = "~";

/**
 * A new POST stream's id: random, the id of the process running its request, and the request's
 * id, so a process resuming the stream elsewhere knows whose presence to check and can answer
 * that request if that process is gone. Never starts with `g` (a GET stream's mark).
 */
export function postStreamId(random: string, owner: string, requestId?: RequestId): string {
  const id = `${random}${PART}${owner}`;
  if (requestId === undefined) return id;
  const carried = toBase64Url(utf8(JSON.stringify(requestId)));
  return carried.length <= MAX_CARRIED_ID ? `${id}${PART}${carried}` : id;
}

/** The process running a POST stream's request, when its id says (ids of older versions do not). */
export function ownerOfStream(streamId: string): string | undefined {
  const owner = streamId.split(PART)[1];
  return owner === "" ? undefined : owner;
}

/** The request id a POST stream's id carries, if any. */
export function requestIdOfStream(streamId: string): RequestId | undefined {
  const parts = streamId.split(PART);
  // An older version's id: `<random>r<carried>`.
  const carried = parts.length > 1 ? parts[2] : streamId.slice(streamId.indexOf("r") + 1);
  if (carried === undefined || (parts.length === 1 && !streamId.includes("r"))) return undefined;
  try {
    const id: unknown = JSON.parse(fromUtf8(fromBase64(carried)));
    return typeof id === "string" || typeof id === "number" ? id : undefined;
  } catch {
    return undefined;
  }
}

/** A short random id, unique enough within a session (stream and server request ids). */
export function randomId(): string {
  return crypto.randomUUID().replace(/-/g, "").slice(0, 16);
}

/** A new legacy session's id: 144 random bits, URL-safe. */
export function newSessionId(): string {
  return toBase64Url(crypto.getRandomValues(new Uint8Array(18)));
}
