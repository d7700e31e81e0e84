import { ErrorCode, McpError } from "../../protocol/errors.js";
import type { JsonRpcMessage } from "../../protocol/messages.js";
import { subscribe } from "../../store/channels.js";
import type { McpStore } from "../../store/types.js";
import { errorMessage } from "../responses.js";
import type { SseStream } from "../streams/sse.js";
import { LegacyChannels } from "./channels.js";
import type { Presence } from "./presence.js";
import { LegacyStream } from "./stream.js";
import { ownerOfStream, requestIdOfStream } from "./stream-ids.js";

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
 * keeps its presence, and its stream goes on. A foreign or unknown stream replays nothing and
 * closes.
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
  const unsubscribe = await subscribe(
    store.bus,
    LegacyChannels.stream(sessionId, streamId),
    (event) => stream.relay(event),
  );
  const owner = ownerOfStream(streamId);
  let checking = false;
  const check = setInterval(() => {
    if (stream.ended || checking) return;
    writer.writeRaw(":\n\n");
    if (owner === undefined) return;
    checking = true;
    context.presence
      .isPresent(owner)
      .then((present) => {
        if (!present && !stream.ended) ownerGone(stream);
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
  if (!(await stream.resume(writer, lastEventId))) writer.close();
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
