import type { JsonRpcErrorResponse, JsonRpcResult, RequestId } from "../../protocol/messages.js";
import { paramsDepthError } from "../../protocol/params.js";
import type { JsonRpcReply } from "../../protocol/pending-requests.js";
import { publish, subscribe } from "../../store/channels.js";
import type { McpStore } from "../../store/types.js";
import { LegacyChannels, type SessionMessage } from "./channels.js";
import type { Presence } from "./presence.js";
import { getStreamKey, waitingKey } from "./session-leases.js";

// What one process tells another about a session, routed by the leases in the store (who
// awaits an answer, who holds the GET stream) and the holder's presence: never by the receiver
// count of a publish, which on a Redis Cluster counts one node's subscribers only.

/** What relaying needs: the store, and this process's presence. */
export interface RemoteContext {
  store: McpStore;
  presence: Presence;
  onError: (error: unknown) => void;
}

/** Longest wait for the holder of a GET stream to say it has a session's new subscriptions. */
const SUBSCRIPTIONS_ACK_MS = 2_000;

/**
 * Answers a server request of the session here (`local`, the session held here), or through the
 * bus on the process that sent it; false when none awaits it.
 */
export async function routeReply(
  context: RemoteContext,
  local: { answer(id: RequestId, reply: JsonRpcReply): boolean } | undefined,
  sessionId: string,
  reply: JsonRpcResult | JsonRpcErrorResponse,
): Promise<boolean> {
  if (reply.id === undefined) return false;
  if (local?.answer(reply.id, reply)) return true;
  const message: SessionMessage = { t: "reply", id: String(reply.id) };
  // Too deep to relay (or to trust): the request that asked gets an error in its place.
  const tooDeep = paramsDepthError("result" in reply ? reply.result : reply.error);
  if (tooDeep) message.error = tooDeep.toJSON();
  else if ("result" in reply) message.result = reply.result;
  else message.error = reply.error;
  return relayReply(context, sessionId, message);
}

/**
 * Sends the client's answer to a server request to the live process whose lease says it awaits
 * it; false when none does (the request is unknown, answered, timed out, or its process gone).
 */
export async function relayReply(
  context: RemoteContext,
  sessionId: string,
  reply: Extract<SessionMessage, { t: "reply" }>,
): Promise<boolean> {
  const { store, presence } = context;
  const holder = await store.leases.holder(waitingKey(sessionId, reply.id));
  if (holder === undefined || holder === presence.processId) return false;
  if (!(await presence.isPresent(holder))) return false;
  await publish(store.bus, LegacyChannels.session(sessionId), reply);
  return true;
}

/**
 * Tells the process holding the session's GET stream (its lease says which) of new resource
 * subscriptions, and waits (briefly) until it says it has them, so a change made after the
 * client's answer is never judged against the old ones.
 */
export async function tellHolder(
  context: RemoteContext,
  sessionId: string,
  uris: string[],
): Promise<void> {
  const { leases, bus } = context.store;
  const holder = await leases.holder(getStreamKey(sessionId));
  if (holder === undefined || holder === context.presence.processId) return;
  if (!(await context.presence.isPresent(holder))) return;
  const ack = crypto.randomUUID();
  const channel = LegacyChannels.session(sessionId);
  let done = () => {};
  const acked = new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, SUBSCRIPTIONS_ACK_MS);
    done = () => {
      clearTimeout(timer);
      resolve();
    };
  });
  const stop = await subscribe(bus, channel, (message) => {
    if (message.t === "subs-ok" && message.ack === ack) done();
  });
  try {
    await publish(bus, channel, { t: "subs", uris, ack });
    await acked;
  } finally {
    done();
    await stop().catch(context.onError);
  }
}
