import { ErrorCode, McpError } from "../../protocol/errors.js";
import type { JsonRpcMessage } from "../../protocol/messages.js";
import { subscribe } from "../../store/channels.js";
import type { McpStore } from "../../store/types.js";
import { errorMessage } from "../responses.js";
import type { SseStream } from "../streams/sse.js";
import { LegacyChannels } from "./channels.js";
import { PRESENCE_TTL_MS, type Presence } from "./presence.js";
import { LegacyStream } from "./stream.js";
import { ownerOfStream, requestIdOfStream, seqOf } from "./stream-ids.js";

/** What {@link resumeElsewhere} needs from the legacy era. */
export interface ResumeContext {
  store: McpStore;
  /** Tells a live process from a dead one. */
  presence: Presence;
  /** How often the process running the request is checked (and a keep-alive sent). */
  checkMs: number;
  onError(error: unknown): void;
  /** Called once the resumed connection closes. */
  onClose(): void;
}

/**
 * Resumes on this process a POST response stream whose request runs on another: replays its
 * log, then goes on live from the bus, with a keep-alive and a check every `checkMs` that the
 * other process (named in the stream id) keeps its presence in the store. Once it has lost it
 * (killed, say), the stream ends with a retryable error for its request (its id rides in the
 * stream id), in the log too, so later resumptions end at once. A process that is merely slow
 * keeps its presence, and its stream goes on.
 *
 * A stream whose log knows neither it nor the event may still be one whose events reached the
 * client before their appends reached the log (the owner writes at once and logs in the
 * background, and may be killed in between). When its id names an owner, the connection waits
 * while that owner keeps its presence, and ends as above once it has lost it; an owner still
 * present after {@link PRESENCE_TTL_MS} with nothing logged or relayed means a foreign or
 * made-up id, and the connection closes. Any other unknown stream (one without an owner, or
 * owned by this process, which would hold it) replays nothing and closes at once.
 */
export async function resumeElsewhere(
  context: ResumeContext,
  sessionId: string,
  streamId: string,
  lastEventId: string,
  writer: SseStream,
): Promise<void> {
  const { store, onError } = context;
  const stream = new LegacyStream({ sessionId, id: streamId, log: store.events, onError });
  const owner = ownerOfStream(streamId);
  // Until the log or the bus shows the stream: how long a present owner is waited for.
  let known = false;
  const unknownUntil = Date.now() + PRESENCE_TTL_MS;
  const unsubscribe = await subscribe(
    store.bus,
    LegacyChannels.stream(sessionId, streamId),
    (event) => {
      known = true;
      stream.relay(event);
    },
  );
  let checking = false;
  const check = setInterval(() => {
    if (stream.ended || checking) return;
    writer.writeRaw(":\n\n");
    if (owner === undefined) return;
    checking = true;
    context.presence
      .isPresent(owner)
      .then((present) => {
        if (stream.ended) return;
        if (present) {
          if (!known && Date.now() >= unknownUntil) writer.close();
          return;
        }
        // The client's last event first (empty, never replayed), so a later resumption from
        // it finds the answer at once.
        if (!known && Number.isFinite(seqOf(lastEventId)))
          store.events.append(stream.logKey, { id: lastEventId, message: {} }).catch(onError);
        ownerGone(stream);
      }, onError)
      .finally(() => {
        checking = false;
      });
  }, context.checkMs);
  (check as { unref?: () => void }).unref?.();
  writer.onClose(() => {
    clearInterval(check);
    unsubscribe().catch(onError);
    context.onClose();
  });
  if (await stream.resume(writer, lastEventId)) known = true;
  // This process knows its own streams: one it does not hold is not coming.
  else if (owner === undefined || owner === context.presence.processId) writer.close();
}

/** Ends a resumed stream whose request ran on a process that is gone (killed, say). */
function ownerGone(stream: LegacyStream): void {
  const requestId = requestIdOfStream(stream.id);
  if (requestId !== undefined) {
    const error = new McpError(
      ErrorCode.InternalError,
      "The server running this request stopped; retry the request",
      { retryable: true },
    );
    stream.send(errorMessage(error, requestId) as unknown as JsonRpcMessage);
  }
  stream.endAndLog();
}
