import type { LeaseStore } from "../../store/types.js";

// A cancellation posted to a process other than the one running the request goes over the
// session's bus channel. The running process subscribes to that channel only when the request
// opens a stream (a quick JSON answer costs no subscription), so a cancellation sent in the
// moment before the subscription took would be lost: it is also kept in the store, in the
// session's slot, where the running process looks once it listens.

/** How long a cancellation is kept for a process that was not listening yet. */
const CANCEL_MARK_MS = 60_000;

function cancelKey(sessionId: string, requestId: string): string {
  return `${sessionId}/cancel:${requestId}`;
}

/** Keeps the cancellation of `requestId` in the store; resolves before it is published. */
export async function markCancelled(
  leases: LeaseStore,
  processId: string,
  sessionId: string,
  requestId: string,
): Promise<void> {
  await leases.acquire(cancelKey(sessionId, requestId), processId, CANCEL_MARK_MS);
}

/** Those of `requestIds` whose cancellation the store keeps. */
export async function cancelledAmong(
  leases: LeaseStore,
  sessionId: string,
  requestIds: string[],
): Promise<string[]> {
  const holders = await Promise.all(
    requestIds.map((requestId) => leases.holder(cancelKey(sessionId, requestId))),
  );
  return requestIds.filter((_, index) => holders[index] !== undefined);
}
