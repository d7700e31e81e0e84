import type { InputHandlers } from "../client/types.js";
import { ErrorCode, McpError } from "../protocol/errors.js";
import type { JsonObject } from "../protocol/messages.js";
import { isObject } from "../protocol/messages.js";
import { InputRequiredSignal } from "../server/context.js";
import type { ElicitParams, HandlerContext, SampleParams } from "../server/types.js";
import type { McpStore } from "../store/types.js";
import { CallHolder, type CallRoute } from "./input-bridge-holder.js";
import { CallRelay } from "./input-bridge-relay.js";
import { callGone, type StartCall } from "./pending-call.js";
import type { UpstreamInput } from "./pending-channels.js";

/** Options of {@link inputBridge}. */
export interface InputBridgeOptions {
  /** The store the gateway is mounted with: its leases and bus reach the other processes. */
  store: McpStore;
  /** This process's id among those sharing the store. */
  processId: string;
  /** How long an upstream call waits for a modern client's retry before it is cancelled. */
  inputTimeoutMs: number;
  /** Receives errors no client sees (a lease that failed to renew). */
  onError: (error: unknown) => void;
}

/**
 * Runs upstream calls for a gateway's handlers so that the upstream's input requests
 * (elicitation, sampling, roots) reach the gateway's client in its era.
 */
export interface InputBridge {
  /**
   * Runs `start` (the upstream call, given the input callbacks and the signal that cancels it)
   * for the handler whose context is `ctx`, and resolves with its result. A legacy client is
   * asked with real server requests. A modern client's round ends with `input_required` while
   * the upstream call waits; the retry, on whichever process, hands it the answers. An
   * upstream call no retry reaches within `inputTimeoutMs`, or whose process is gone, fails the
   * retry with a retryable InternalError ("the upstream call is gone"): the client sends the
   * request again from the start.
   */
  run(ctx: HandlerContext, start: StartCall): Promise<JsonObject>;
  /** Cancels the calls waiting here and lets go of their leases and channels. */
  close(): Promise<void>;
}

/** Where `ctx.state` keeps the call a modern round left waiting. */
const STATE_KEY = "gateway";

/** What a round that asked for input seals in `ctx.state`: the call and what was asked. */
interface WaitingCall {
  call: string;
  holder: string;
  asked: Record<string, UpstreamInput>;
}

/**
 * Creates the input bridge of a gateway process (see {@link InputBridge}): `proxyServer` makes
 * one per mount, with the store the server is mounted with.
 */
export function inputBridge(options: InputBridgeOptions): InputBridge {
  return new Bridge(options);
}

class Bridge implements InputBridge {
  readonly #options: InputBridgeOptions;
  readonly #holder: CallHolder;
  readonly #closing = new AbortController();

  constructor(options: InputBridgeOptions) {
    this.#options = options;
    this.#holder = new CallHolder(options);
  }

  run(ctx: HandlerContext, start: StartCall): Promise<JsonObject> {
    if (ctx.era === "legacy") return start(askingLegacyClient(ctx), ctx.signal);
    const waiting = waitingCallOf(ctx.state);
    if (!waiting) return this.#drive(ctx, this.#holder.open(declaredOnly(ctx, start)), undefined);
    return this.#resume(ctx, waiting);
  }

  async close(): Promise<void> {
    this.#closing.abort();
    await this.#holder.close();
  }

  /** A retry: the client's answers to what the last round asked, to the call wherever it is. */
  async #resume(ctx: HandlerContext, waiting: WaitingCall): Promise<JsonObject> {
    const answers = await askClient(ctx, waiting.asked);
    const route = this.#holder.route(waiting.call) ?? this.#relay(waiting);
    return this.#drive(ctx, route, answers);
  }

  #relay(waiting: WaitingCall): CallRoute {
    if (waiting.holder === this.#options.processId) {
      throw callGone("it ended, timed out or was cancelled");
    }
    const { store, onError } = this.#options;
    return new CallRelay(waiting, { store, onError, closing: this.#closing.signal });
  }

  /**
   * Exchanges answers for the call's next step until it ends, or asks the client what the
   * call waits for (which ends the round with `input_required`, the call noted in `ctx.state`).
   */
  async #drive(
    ctx: HandlerContext,
    route: CallRoute,
    first: JsonObject | undefined,
  ): Promise<JsonObject> {
    let answers = first;
    for (;;) {
      const step = await route.exchange(answers, ctx.signal);
      if (step.t === "result") return step.result;
      if (step.t === "error") throw step.error;
      const waiting: WaitingCall = { call: route.call, holder: route.holder, asked: step.inputs };
      ctx.state[STATE_KEY] = waiting as unknown as JsonObject;
      try {
        answers = await askClient(ctx, step.inputs);
      } catch (error) {
        // The round ends here, the call waiting; anything else means the client cannot answer.
        if (!(error instanceof InputRequiredSignal)) route.cancel(error);
        throw error;
      }
    }
  }
}

/**
 * `start` with input callbacks for what the modern client declared only: the upstream's other
 * requests (a `roots/list` it sends of its own accord, say) are answered with an error and the
 * call goes on, as a legacy client's refusal would, instead of failing the client's request.
 */
function declaredOnly(ctx: HandlerContext, start: StartCall): StartCall {
  const declared = ctx.client.capabilities;
  const refuse = (capability: string) => () => {
    const message = `The client did not declare the ${capability} capability`;
    return Promise.reject(new McpError(ErrorCode.MethodNotFound, message));
  };
  return (handlers, signal) =>
    start(
      {
        elicitation: declared.elicitation ? handlers.elicitation : refuse("elicitation"),
        sampling: declared.sampling ? handlers.sampling : refuse("sampling"),
        roots: declared.roots ? handlers.roots : refuse("roots"),
      },
      signal,
    );
}

/** The callbacks of an upstream call for a legacy client: real server requests, each awaited. */
function askingLegacyClient(ctx: HandlerContext): InputHandlers {
  let next = 0;
  const key = () => `upstream-${++next}`;
  return {
    elicitation: (params) => ctx.elicit(key(), params as ElicitParams),
    sampling: (params) => ctx.sample(key(), params as SampleParams),
    roots: () => ctx.roots(key()),
  };
}

/**
 * The client's answers to `inputs`, by key; throws the round's `InputRequiredSignal` while any
 * is missing (every input is asked at once, so one round carries them all).
 */
async function askClient(
  ctx: HandlerContext,
  inputs: Record<string, UpstreamInput>,
): Promise<JsonObject> {
  const entries = Object.entries(inputs);
  const answers = await Promise.all(
    entries.map(([key, { method, params }]) => {
      if (method === "elicitation/create") return ctx.elicit(key, params as ElicitParams);
      if (method === "sampling/createMessage") return ctx.sample(key, params as SampleParams);
      return ctx.roots(key);
    }),
  );
  return Object.fromEntries(entries.map(([key], index) => [key, answers[index]]));
}

/** The call an earlier round left waiting, from the state it sealed. */
function waitingCallOf(state: JsonObject): WaitingCall | undefined {
  const waiting = state[STATE_KEY];
  if (!isObject(waiting) || typeof waiting.call !== "string") return undefined;
  if (typeof waiting.holder !== "string" || !isObject(waiting.asked)) return undefined;
  return waiting as unknown as WaitingCall;
}
