import type { JsonObject } from "../../protocol/messages.js";
import { type Channel, channel } from "../../store/channels.js";
import type { StreamEvent } from "./stream.js";

/** A process shutting down offers a GET stream it holds: which, and how far it got. */
export interface Handoff {
  session: string;
  stream: string;
  seq: number;
  from: string;
}

/**
 * What one process tells the others about a session, on the session's bus channel: the answer
 * to a server request, a cancellation, new resource subscriptions, a GET stream taken over, or
 * the session's end. Whichever process holds the affected state acts on it.
 */
export type SessionMessage =
  | {
      t: "reply";
      id: string;
      result?: JsonObject;
      error?: { code: number; message: string; data?: unknown };
    }
  | { t: "cancel"; requestId: string }
  /** New resource subscriptions; the holder of the GET stream answers `subs-ok` with `ack`. */
  | { t: "subs"; uris: string[]; ack?: string }
  | { t: "subs-ok"; ack: string }
  | { t: "take"; stream: string; by: string }
  /** The process that held a GET stream let go of it; its events up to `seq` are in the log. */
  | { t: "released"; stream: string; seq: number; by: string }
  | { t: "end" };

/**
 * Every channel of the legacy era, each with its message type (the change channel every era
 * shares is in `server/channels.ts`).
 */
export const LegacyChannels = {
  /** GET streams offered by a process shutting down. */
  handoff: channel<Handoff>("legacy:handoff"),
  /** Session records that changed: every process drops its cached copy. */
  sessionRecords: channel<string>("legacy:sessions"),
  /**
   * What one process tells the others about a session. Sharded by the session: on a Redis
   * Cluster it reaches only the node owning the session's slot.
   */
  session: (sessionId: string): Channel<SessionMessage> =>
    channel(`session:${sessionId}`, sessionId),
  /** A POST stream's events, for a resumption on another process; in the session's shard. */
  stream: (sessionId: string, streamId: string): Channel<StreamEvent> =>
    channel(`stream:${sessionId}/${streamId}`, sessionId),
} as const;
