import { ErrorCode, McpError } from "../../protocol/errors.js";
import type { AuthInfo } from "../../server/types.js";
import type { McpStore, SessionRecord } from "../../store/types.js";
import type { EndpointServices } from "../endpoint-services.js";
import { errorResponse, sseResponse } from "../responses.js";
import { SseStream } from "../streams/sse.js";
import { granted } from "../streams/stream-slots.js";
import type { McpHttpRequest, McpHttpResponse } from "../types.js";
import type { StreamHandoffs } from "./handoff.js";
import type { HeldSession } from "./held-session.js";
import { resumeElsewhere } from "./resume-elsewhere.js";
import { PRIMING_VERSION } from "./run.js";
import type { Sessions } from "./sessions.js";
import { StoreUnavailable } from "./store-outage.js";
import { streamOfEventId } from "./stream-ids.js";

/** What serving a GET needs from the legacy era. */
export interface GetStreamContext {
  core: EndpointServices;
  store: McpStore;
  sessions: Sessions;
  handoffs: StreamHandoffs;
  /** See `LegacyOptions.resumeCheckMs`. */
  resumeCheckMs: number;
}

/**
 * Serves a GET of a session (found and checked already): its standalone stream, opened or
 * resumed (here, or taken over from another process), or the resumption of a POST response
 * stream with `Last-Event-ID` (PROTOCOL §3). The connection holds a stream slot until it closes.
 */
export async function serveGet(
  context: GetStreamContext,
  req: McpHttpRequest,
  record: SessionRecord,
  auth: AuthInfo | undefined,
): Promise<McpHttpResponse> {
  const { core, sessions } = context;
  const held = sessions.hold(record);
  const lastEventId = req.header("last-event-id");
  const streamId = lastEventId === null ? undefined : streamOfEventId(lastEventId);
  const resumesPost = lastEventId !== null && streamId !== undefined && !streamId.startsWith("g");
  if (!resumesPost && held.standalone?.attached && lastEventId === null) {
    sessions.release(held);
    return errorResponse(
      409,
      new McpError(ErrorCode.InvalidRequest, "The session already has a GET stream"),
    );
  }
  const client = core.clientOf(req, auth);
  const slot = core.slots.take(client);
  if (!granted(slot)) {
    sessions.release(held);
    return slot;
  }
  const writer = new SseStream();
  writer.onClose(slot);
  const sse = sseResponse(writer);
  try {
    if (resumesPost) await resumePost(context, held, streamId, lastEventId, writer);
    else await openStandalone(context, held, record, { streamId, lastEventId, client }, writer);
  } catch (error) {
    // The slot, the stream and its timers go with the connection; the client gets a 503.
    writer.close();
    throw error instanceof StoreUnavailable ? error : new StoreUnavailable(error);
  }
  // A client that left while this was prepared: a host may never read, or cancel, the body.
  // (Asked without building an AbortSignal where the host can: one per open stream adds up.)
  if (req.aborted ?? req.signal.aborted) writer.close();
  return sse;
}

/** Opens, or resumes (here or from another process), the session's GET stream on `writer`. */
async function openStandalone(
  { sessions, handoffs }: GetStreamContext,
  held: HeldSession,
  record: SessionRecord,
  from: { streamId: string | undefined; lastEventId: string | null; client: string | undefined },
  writer: SseStream,
): Promise<void> {
  const { streamId, lastEventId, client } = from;
  const local = held.standalone !== undefined && held.standalone.id === streamId;
  const standalone = held.openStandalone(streamId);
  sessions.stopAwaiting(record.id);
  sessions.connectChanges(held);
  writer.onClose(() => sessions.awaitResumption(held, standalone, client));
  if (lastEventId !== null) {
    // Held elsewhere, perhaps: that process lets go and logs what it sent before the replay;
    // what this one is asked to send meanwhile is numbered after it.
    const takeOver = async () => {
      const seq = await handoffs.takeOver(record.id, standalone);
      if (seq !== undefined) standalone.continueFrom(seq);
    };
    await standalone.resume(writer, lastEventId, local ? undefined : takeOver);
    // A fresh id after the replay: the client resumes from here, and knows the stream is live.
    if (record.protocolVersion >= PRIMING_VERSION && !standalone.ended) standalone.prime(writer);
  } else {
    // This process holds the stream (a lease) before the client hears it is open; whichever
    // process held it before lets go of it now.
    await handoffs.claimNew(held, standalone);
    standalone.attach(writer);
    if (record.protocolVersion >= PRIMING_VERSION) standalone.prime(writer);
  }
}

/**
 * Resumes a POST response stream: replays its log, then goes on live, here if the request runs
 * here, or from the bus if it runs on another process. A foreign or unknown id replays nothing.
 */
async function resumePost(
  context: GetStreamContext,
  held: HeldSession,
  streamId: string,
  lastEventId: string,
  writer: SseStream,
): Promise<void> {
  const live = held.postStream(streamId);
  if (live) {
    await live.resume(writer, lastEventId);
    return;
  }
  await resumeElsewhere(
    {
      store: context.store,
      presence: context.sessions.presence,
      checkMs: context.resumeCheckMs,
      onError: (error) => context.core.reportError(error),
      onClose: () => context.sessions.release(held),
    },
    held.sessionId,
    streamId,
    lastEventId,
    writer,
  );
}
