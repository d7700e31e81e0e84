import { invalidParams } from "../protocol/errors.js";
import type { JsonObject } from "../protocol/messages.js";
import { isObject } from "../protocol/messages.js";
import type { NonceStore } from "../store/types.js";
import { principalKey } from "./access.js";
import type { InputCollector, TransportContext } from "./context.js";
import { digestParams, type StateSealer } from "./request-state.js";

/** How sealed `requestState` is made and redeemed between rounds. */
export interface RoundStateOptions {
  sealer: StateSealer;
  nonces: NonceStore;
  /** Lifetime of a sealed `requestState`. */
  stateTtlMs: number;
  /** Claim every `requestState` once, across processes. */
  singleUseState: boolean;
}

/** The request a round belongs to. */
interface RoundRequest {
  method: string;
  params: JsonObject;
}

/** What a round starts from: the answers known so far and the handler's own state. */
export interface Round {
  inputs: InputCollector;
  state: JsonObject;
  /** Which round this is: 1 for the first request, one more for each retry. */
  number: number;
  /** The span of the round before (`traceparent`), when telemetry recorded one. */
  previous?: string;
}

/**
 * Opens a round of a multi round-trip request: checks and redeems its `requestState`, and merges
 * the answers of earlier rounds with the retry's `inputResponses` (spec: patterns/mrtr).
 */
export function openRound(
  options: RoundStateOptions,
  request: RoundRequest,
  env: TransportContext,
): Round | Promise<Round> {
  const { requestState, inputResponses } = request.params;
  if (inputResponses !== undefined && !isObject(inputResponses)) {
    throw invalidParams("inputResponses must be an object");
  }
  // A first request (most of them) has nothing to redeem: no promise, no await.
  if (requestState === undefined) {
    const responses: JsonObject = {};
    if (inputResponses) Object.assign(responses, inputResponses);
    return { inputs: { responses, pending: {} }, state: {}, number: 1 };
  }
  return redeemRound(options, request, env);
}

/** {@link openRound} for a retry: its sealed `requestState` checked, claimed and merged. */
async function redeemRound(
  options: RoundStateOptions,
  request: RoundRequest,
  env: TransportContext,
): Promise<Round> {
  const { requestState, inputResponses } = request.params;
  const payload =
    typeof requestState === "string" ? await options.sealer.open(requestState) : undefined;
  // One answer for every failure, so a probe learns nothing about why (PROTOCOL §2.4).
  const invalid = () => invalidParams("Invalid or expired requestState");
  if (!payload || payload.expires < Date.now()) throw invalid();
  if (payload.principal !== principalKey(env.auth) || payload.method !== request.method)
    throw invalid();
  if (payload.digest !== (await digestParams(request.params))) throw invalid();
  if (
    payload.nonce !== undefined &&
    !(await options.nonces.claim(`state:${payload.nonce}`, options.stateTtlMs))
  ) {
    throw invalid();
  }
  const responses: JsonObject = {};
  Object.assign(responses, payload.responses);
  if (inputResponses) Object.assign(responses, inputResponses);
  const state = isObject(payload.state) ? payload.state : {};
  const number = (typeof payload.round === "number" ? payload.round : 1) + 1;
  const round: Round = { inputs: { responses, pending: {} }, state, number };
  if (typeof payload.trace === "string") round.previous = payload.trace;
  return round;
}

/** True when the handler asked for inputs this round did not have. */
export function needsInput(round: Round | undefined): round is Round {
  if (round === undefined) return false;
  // A key is enough to know: no array of them on every call.
  const { pending } = round.inputs;
  for (const key in pending) if (Object.hasOwn(pending, key)) return true;
  return false;
}

/** The `input_required` result that ends a round, sealing what the next round starts from. */
export async function inputRequiredResult(
  options: RoundStateOptions,
  request: RoundRequest,
  env: TransportContext,
  round: Round,
  state: JsonObject,
): Promise<JsonObject> {
  const { inputs } = round;
  const requestState = await options.sealer.seal({
    round: round.number,
    trace: env.operation?.traceparent(),
    principal: principalKey(env.auth),
    method: request.method,
    digest: await digestParams(request.params),
    expires: Date.now() + options.stateTtlMs,
    nonce: options.singleUseState ? crypto.randomUUID() : undefined,
    responses: inputs.responses,
    state,
  });
  return { resultType: "input_required", inputRequests: inputs.pending, requestState };
}
