import { ErrorCode, McpError } from "../../protocol/errors.js";
import type { RequestId } from "../../protocol/messages.js";
import { errorResponse } from "../responses.js";
import type { McpHttpResponse } from "../types.js";

/** Options of {@link StreamSlots}. */
export interface StreamSlotsOptions {
  /** Most long-lived connections open at once in this process. */
  max: number;
  /** Most of them one client (principal, or address when anonymous) may hold. */
  maxPerClient: number;
}

/** A slot that was granted: `release` gives it back, once, however often it is called. */
export type SlotRelease = () => void;

/**
 * Admission for long-lived connections (legacy GET streams and their resumptions, modern listen
 * streams): a slot is taken when one opens and given back the moment it closes, from either
 * side. The per-client cap keeps one caller from taking every slot of the process.
 */
export class StreamSlots {
  readonly #options: StreamSlotsOptions;
  readonly #perClient = new Map<string, number>();
  #open = 0;

  constructor(options: StreamSlotsOptions) {
    if (!(options.maxPerClient >= 1) || !(options.max >= 1))
      throw new TypeError("maxStreams and maxStreamsPerClient must be at least 1");
    this.#options = options;
  }

  /** Most connections this process admits. */
  get capacity(): number {
    return this.#options.max;
  }

  /** Most connections one client may hold. */
  get perClient(): number {
    return this.#options.maxPerClient;
  }

  /** Connections open now. */
  get size(): number {
    return this.#open;
  }

  /**
   * Takes a slot for `client`, or answers why not: 429 when the client holds its share, 503 when
   * the process is full (both with Retry-After and a JSON-RPC body).
   */
  take(client: string | undefined, id?: RequestId): SlotRelease | McpHttpResponse {
    // A client nobody can tell apart (an anonymous one on a host that gives no address) is held
    // to the process's cap only: sharing one budget, anonymous callers would starve each other.
    const held = client === undefined ? 0 : (this.#perClient.get(client) ?? 0);
    if (held >= this.#options.maxPerClient)
      return refuse(429, "Too many open streams for this client; close one first", id);
    if (this.#open >= this.#options.max) return refuse(503, "Too many open streams", id);
    this.#open++;
    if (client !== undefined) this.#perClient.set(client, held + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#open--;
      if (client === undefined) return;
      const left = (this.#perClient.get(client) ?? 1) - 1;
      if (left === 0) this.#perClient.delete(client);
      else this.#perClient.set(client, left);
    };
  }
}

function refuse(status: 429 | 503, message: string, id?: RequestId): McpHttpResponse {
  return errorResponse(status, new McpError(ErrorCode.InternalError, message), {
    id,
    headers: {
      "retry-after": "5",
    },
  });
}

/** True when {@link StreamSlots.take} granted the slot. */
export function granted(slot: SlotRelease | McpHttpResponse): slot is SlotRelease {
  return typeof slot === "function";
}
