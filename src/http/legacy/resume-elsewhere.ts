import { ErrorCode, McpError } from "../../protocol/errors.js";
import type { JsonRpcMessage } from "../../protocol/messages.js";
import { publish, subscribe } from "../../store/channels.js";
import type { McpStore } from "../../store/types.js";
import { errorMessage } from "../responses.js";
import type { SseStream } from "../sse.js";
import { LegacyChannels } from "./channels.js";
import { LegacyStream, requestIdOfStream } from "./stream.js";

/** What {@link resumeElsewhere} needs from the legacy era. */
export interface ResumeContext {
  store: McpStore;
  /** How often the process running the request is checked (and a keep-alive sent). */
  checkMs: number;
  onError(error: unknown): void;
  /** Called once the resumed connection closes. */
  onClose(): void;
}

/**
 * Resumes on this process a POST response stream whose request runs on another: replays its
 * log, then goes on live from the bus, with a keep-alive and a check every `checkMs` that the
 * other process is still there. Two checks without a word from it end the stream with a
 * retryable error for its request (its id rides in the stream id), in the log too, so later
 * resumptions end at once. A foreign or unknown stream replays nothing and closes.
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
  let heard = true;
  const unsubscribe = await subscribe(store.bus, LegacyChannels.stream(stream.logKey), (event) => {
    heard = true;
    stream.relay(event);
  });
  let missed = 0;
  const check = setInterval(() => {
    if (stream.ended) return;
    writer.writeRaw(":\n\n");
    if (heard) missed = 0;
    else if (++missed >= 2) return ownerGone(stream);
    heard = false;
    publish(store.bus, LegacyChannels.session(sessionId), { t: "alive?", stream: streamId }).catch(
      onError,
    );
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
