import { ErrorCode, McpError } from "../../protocol/errors.js";
import type { JsonRpcMessage } from "../../protocol/messages.js";
import { subscribe } from "../../store/channels.js";
import type { McpStore } from "../../store/types.js";
import { errorMessage } from "../responses.js";
import type { SseStream } from "../streams/sse.js";
import { LegacyChannels } from "./channels.js";
import { PRESENCE_TTL_MS, type Presence } from "./presence.js";
import { LegacyStream } from "./stream.js";
import { endMarkerId, ownerOfStream, requestIdOfStream, seqOf } from "./stream-ids.js";

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
 * background, and may be killed in between). When its id names another process, the connection
 * stays while that process keeps its presence: logged or ended in the log meanwhile (its appends
 * were only slow), it closes, and the client's next resumption replays it; once the owner has
 * lost its presence, it ends as above, the client's last event logged first so that a later
 * resumption finds the answer at once; still present after {@link PRESENCE_TTL_MS} (and one
 * check more), or unchecked that long (the store down), it closes, as for a foreign or made-up
 * id. Any other unknown stream (without an owner, or owned by this process, which would hold
 * it) replays nothing and closes at once.
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
  const unlogged = { lastEventId, until: Date.now() + PRESENCE_TTL_MS, known: () => known };
  let unsubscribe: () => Promise<void>;
  try {
    unsubscribe = await subscribe(
      store.bus,
      LegacyChannels.stream(sessionId, streamId),
      (event) => {
        known = true;
        stream.relay(event);
      },
    );
  } catch (error) {
    context.onClose();
    throw error;
  }
  let checking = false;
  const check = setInterval(() => {
    if (stream.ended || checking) return;
    writer.writeRaw(":\n\n");
    if (owner === undefined) return;
    // Bounded even while the checks fail.
    if (!known && Date.now() >= unlogged.until + context.checkMs) {
      writer.close();
      return;
    }
    checking = true;
    const checked = known
      ? context.presence.isPresent(owner).then((present) => {
          if (!present && !stream.ended) ownerGone(stream);
        })
      : checkUnlogged(context, owner, stream, writer, unlogged);
    checked.catch(onError).finally(() => {
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

/** One check of a resumed stream its log did not know (see {@link resumeElsewhere}). */
async function checkUnlogged(
  context: ResumeContext,
  owner: string,
  stream: LegacyStream,
  writer: SseStream,
  unlogged: { lastEventId: string; until: number; known(): boolean },
): Promise<void> {
  const log = context.store.events;
  const [later, ended, present] = await Promise.all([
    log.after(stream.logKey, unlogged.lastEventId),
    log.after(stream.logKey, endMarkerId(stream.id)),
    context.presence.isPresent(owner),
  ]);
  if (stream.ended || unlogged.known()) return;
  if (later !== undefined || ended !== undefined) writer.close();
  else if (present) {
    if (Date.now() >= unlogged.until) writer.close();
  } else if (requestIdOfStream(stream.id) === undefined) writer.close();
  else {
    if (Number.isFinite(seqOf(unlogged.lastEventId)))
      log.append(stream.logKey, { id: unlogged.lastEventId, message: {} }).catch(context.onError);
    ownerGone(stream);
  }
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
