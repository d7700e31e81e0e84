import { McpError } from "../protocol/errors.js";
import type { JsonObject } from "../protocol/messages.js";
import { publish, subscribe } from "../store/channels.js";
import type { McpStore } from "../store/types.js";
import type { CallRoute } from "./input-bridge-holder.js";
import { type CallStep, callGone } from "./pending-call.js";
import { type CallMessage, callLeaseKey, GatewayChannels } from "./pending-channels.js";

/**
 * How often a relayed exchange checks on the holder while it waits: its lease (a holder that
 * died lets it run out), and whether it acknowledged the answers (a lost message is sent
 * again, at most {@link MAX_SENDS} times).
 */
const CHECK_MS = 2_000;
const MAX_SENDS = 3;

/** What relaying needs. */
export interface RelayOptions {
  store: McpStore;
  onError: (error: unknown) => void;
  /** Aborted when the bridge closes: waits end. */
  closing: AbortSignal;
}

/**
 * The route to an upstream call held by another process: the client's answers go over the
 * call's bus channel, and the holder's word on how the call went on comes back on it. Whether
 * the holder lives is read from its lease on the call, never from a publish's receiver count;
 * a holder gone or silent ends the wait with a retryable error.
 */
export class CallRelay implements CallRoute {
  readonly call: string;
  readonly holder: string;
  readonly #options: RelayOptions;

  constructor(held: { call: string; holder: string }, options: RelayOptions) {
    this.call = held.call;
    this.holder = held.holder;
    this.#options = options;
  }

  async exchange(answers: JsonObject | undefined, signal: AbortSignal): Promise<CallStep> {
    const { bus } = this.#options.store;
    const channel = GatewayChannels.call(this.call);
    const reply = crypto.randomUUID();
    const heard = new Heard(reply);
    const stop = await subscribe(bus, channel, (message) => heard.take(message));
    try {
      await this.#checkHolder();
      const send = () => publish(bus, channel, { t: "answer", reply, answers: answers ?? {} });
      await send();
      for (let sends = 1; ; ) {
        const step = await heard.within(CHECK_MS, signal, this.#options.closing);
        if (step) return step;
        if (signal.aborted) {
          this.cancel(signal.reason);
          throw signal.reason;
        }
        if (this.#options.closing.aborted) throw callGone("the gateway is shutting down");
        await this.#checkHolder();
        if (heard.acked) continue;
        if (sends++ >= MAX_SENDS) throw callGone("the process holding it does not answer");
        await send();
      }
    } finally {
      await stop().catch(this.#options.onError);
    }
  }

  cancel(_reason: unknown): void {
    const channel = GatewayChannels.call(this.call);
    publish(this.#options.store.bus, channel, { t: "cancel" }).catch(this.#options.onError);
  }

  async #checkHolder(): Promise<void> {
    const holder = await this.#options.store.leases.holder(callLeaseKey(this.call));
    if (holder !== this.holder) throw callGone("the process holding it is gone");
  }
}

/** What came back for one exchange: its ack, then the holder's step. */
class Heard {
  readonly #reply: string;
  acked = false;
  #step: CallStep | undefined;
  #wake: (() => void) | undefined;

  constructor(reply: string) {
    this.#reply = reply;
  }

  take(message: CallMessage): void {
    if (!("reply" in message) || message.reply !== this.#reply) return;
    if (message.t === "ack") this.acked = true;
    else if (message.t === "result") this.#step = { t: "result", result: message.result };
    else if (message.t === "input") this.#step = { t: "input", inputs: message.inputs };
    else if (message.t === "error") {
      const { code, message: text, data } = message.error;
      this.#step = { t: "error", error: new McpError(code, text, data) };
    }
    this.#wake?.();
  }

  /** The step, once heard; undefined after `ms` or an abort, for the caller to check on. */
  within(ms: number, ...signals: AbortSignal[]): Promise<CallStep | undefined> {
    if (this.#step || signals.some((signal) => signal.aborted)) return Promise.resolve(this.#step);
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        for (const signal of signals) signal.removeEventListener("abort", done);
        this.#wake = undefined;
        resolve(this.#step);
      };
      const timer = setTimeout(done, ms);
      for (const signal of signals) signal.addEventListener("abort", done, { once: true });
      // An ack alone does not end the wait: only the step, a tick or an abort does.
      this.#wake = () => {
        if (this.#step) done();
      };
    });
  }
}
