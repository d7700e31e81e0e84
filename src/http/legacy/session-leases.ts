// The leases a legacy session's processes hold in the store, each in the session's hash slot:
// who awaits the answer to a server request, and who holds the session's GET stream.

/** The lease held by the process awaiting the client's answer to server request `id`. */
export function waitingKey(sessionId: string, id: string): string {
  return `${sessionId}/req:${id}`;
}

/** The lease held by the process holding the session's GET stream. */
export function getStreamKey(sessionId: string): string {
  return `${sessionId}/get`;
}

/** How long a server request's lease outlives its timeout (clock drift, a slow release). */
export const WAITING_MARGIN_MS = 5_000;
