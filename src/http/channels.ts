import { type Channel, channel } from "../store/channels.js";
import type { SessionMessage } from "./legacy-session.js";
import type { StreamEvent } from "./legacy-stream.js";

/** A process shutting down offers a GET stream it holds: which, and how far it got. */
export interface Handoff {
  session: string;
  stream: string;
  seq: number;
  from: string;
}

/** Every channel the HTTP layer uses, each with its message type (the change channel is `server/channels.ts`). */
export const Channels = {
  /** GET streams offered by a process shutting down. */
  handoff: channel<Handoff>("legacy:handoff"),
  /** Session records that changed: every process drops its cached copy. */
  sessionRecords: channel<string>("legacy:sessions"),
  /** What one process tells the others about a session. */
  session: (sessionId: string): Channel<SessionMessage> => channel(`session:${sessionId}`),
  /** A detached POST stream's events, for a resumption on another process. */
  stream: (logKey: string): Channel<StreamEvent> => channel(`stream:${logKey}`),
} as const;
