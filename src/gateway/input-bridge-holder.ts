import { ErrorCode, isMcpError } from "../protocol/errors.js";
import type { JsonObject } from "../protocol/messages.js";
import { publish, subscribe } from "../store/channels.js";
import type { McpStore } from "../store/types.js";
import { type CallStep, callGone, PendingCall, type StartCall } from "./pending-call.js";
import {
  type CallMessage,
  callLeaseKey,
  GatewayChannels,
  type WireError,
} from "./pending-channels.js";

/**
 * How long a held call's lease lasts unrenewed: what another process waits at most to learn
 * that the holder died. Renewed every third of it while the call lives.
 */
export const CALL_LEASE_MS = 15_000;

/** One way to reach an upstream call: here, or through the bus on the process holding it. */
export interface CallRoute {
  readonly call: string;
  /** The process holding the call (its lease names it). */
  readonly holder: string;
  /**
   * Hands the client's answers (none on the first round) to the call and resolves with how it
   * went on; `signal` (the client gave up) cancels the call.
   */
  exchange(answers: JsonObject | undefined, signal: AbortSignal): Promise<CallStep>;
  /** Cancels the call upstream: the client cannot be asked what it wants. */
  cancel(reason: unknown): void;
}

/** What holding calls needs. */
export interface HolderOptions {
  store: McpStore;
  processId: string;
  inputTimeoutMs: number;
  onError: (error: unknown) => void;
}

/** A call of this process's, with what makes it reachable from the others once it waits. */
interface Held {
  call: PendingCall;
  /** Resolves once the lease is taken and the call's channel heard; set on first input. */
  reachable?: Promise<void>;
  renewal?: ReturnType<typeof setInterval>;
  unsubscribe?: Promise<() => Promise<void>>;
  /** The exchanges other processes sent, by reply id: each is acted on once. */
  replies: Set<string>;
}

/** The JSON-RPC error object of an error, as it crosses to another process. */
export function toWireError(error: unknown): WireError {
  if (isMcpError(error)) return error.toJSON();
  return { code: ErrorCode.InternalError, message: String((error as Error)?.message ?? error) };
}

/**
 * The upstream calls this process runs for modern rounds, by call id. A call that asks for
 * input takes a lease naming this process and hears its bus channel, so a retry on another
 * process can hand it the client's answers; it is dropped (lease released, channel left) once
 * it ends, times out or is cancelled.
 */
export class CallHolder {
  readonly #options: HolderOptions;
  readonly #calls = new Map<string, Held>();

  constructor(options: HolderOptions) {
    this.#options = options;
  }

  /** Starts an upstream call under a new random id; the route to it. */
  open(start: StartCall): CallRoute {
    const held: Held = { call: new PendingCall(crypto.randomUUID(), start), replies: new Set() };
    this.#calls.set(held.call.id, held);
    return this.#routeTo(held);
  }

  /** The route to a call held here, if it is. */
  route(callId: string): CallRoute | undefined {
    const held = this.#calls.get(callId);
    return held && this.#routeTo(held);
  }

  #routeTo(held: Held): CallRoute {
    return {
      call: held.call.id,
      holder: this.#options.processId,
      exchange: (answers, signal) => this.#exchange(held, answers, signal),
      cancel: (reason) => this.#cancel(held, reason),
    };
  }

  /** Cancels every call held here and lets go of their leases and channels. */
  async close(): Promise<void> {
    const drops = [...this.#calls.values()].map((held) => {
      held.call.cancel(callGone("the gateway is shutting down"));
      return this.#drop(held);
    });
    await Promise.all(drops);
  }

  async #exchange(
    held: Held,
    answers: JsonObject | undefined,
    signal: AbortSignal,
  ): Promise<CallStep> {
    const { call } = held;
    if (answers) call.answer(answers);
    const step = await untilAborted(call.next(), signal, () => this.#cancel(held, signal.reason));
    if (step.t !== "input") {
      void this.#drop(held);
      return step;
    }
    try {
      await this.#reachable(held);
    } catch (error) {
      this.#cancel(held, error);
      throw error;
    }
    call.park(this.#options.inputTimeoutMs, () => void this.#drop(held));
    return step;
  }

  #cancel(held: Held, reason: unknown): void {
    held.call.cancel(reason);
    void this.#drop(held);
  }

  /** Takes the call's lease and hears its channel, once; renews the lease while it lives. */
  #reachable(held: Held): Promise<void> {
    if (held.reachable) return held.reachable;
    const { store, processId, onError } = this.#options;
    const key = callLeaseKey(held.call.id);
    held.unsubscribe = subscribe(store.bus, GatewayChannels.call(held.call.id), (message) =>
      this.#serve(held, message).catch(onError),
    );
    held.reachable = Promise.all([
      held.unsubscribe,
      store.leases.acquire(key, processId, CALL_LEASE_MS),
    ]).then(() => {
      if (!this.#calls.has(held.call.id)) return;
      // Acquire, not renew: a lease lost while the store was unreachable is taken back.
      held.renewal = setInterval(
        () => void store.leases.acquire(key, processId, CALL_LEASE_MS).catch(onError),
        CALL_LEASE_MS / 3,
      );
      (held.renewal as { unref?: () => void }).unref?.();
    });
    return held.reachable;
  }

  /** Acts on what another process says about a call held here. */
  async #serve(held: Held, message: CallMessage): Promise<void> {
    if (message.t === "cancel") return this.#cancel(held, callGone("the client cancelled"));
    if (message.t !== "answer") return;
    const channel = GatewayChannels.call(held.call.id);
    const { reply } = message;
    const { bus } = this.#options.store;
    // A repeat means the ack was lost: say it again, and act on the answers once.
    await publish(bus, channel, { t: "ack", reply });
    if (held.replies.has(reply)) return;
    held.replies.add(reply);
    let step: CallStep;
    try {
      step = await this.#exchange(held, message.answers, new AbortController().signal);
    } catch (error) {
      step = { t: "error", error };
    }
    if (step.t === "result")
      await publish(bus, channel, { t: "result", reply, result: step.result });
    else if (step.t === "input")
      await publish(bus, channel, { t: "input", reply, inputs: step.inputs });
    else await publish(bus, channel, { t: "error", reply, error: toWireError(step.error) });
  }

  async #drop(held: Held): Promise<void> {
    const id = held.call.id;
    if (this.#calls.get(id) !== held) return;
    this.#calls.delete(id);
    clearInterval(held.renewal);
    if (!held.reachable) return;
    const { store, processId, onError } = this.#options;
    await held.reachable.catch(() => {});
    await Promise.all([
      store.leases.release(callLeaseKey(id), processId).catch(onError),
      held.unsubscribe?.then((stop) => stop()).catch(onError),
    ]);
  }
}

/** `promise`, unless `signal` aborts first: then `onAbort` runs and its reason is thrown. */
export function untilAborted<T>(
  promise: Promise<T>,
  signal: AbortSignal,
  onAbort: () => void,
): Promise<T> {
  if (signal.aborted) {
    onAbort();
    return Promise.reject(signal.reason);
  }
  return new Promise<T>((resolve, reject) => {
    const abort = () => {
      onAbort();
      reject(signal.reason);
    };
    signal.addEventListener("abort", abort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener("abort", abort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener("abort", abort);
        reject(error);
      },
    );
  });
}
