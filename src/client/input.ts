import { ErrorCode, McpError } from "../protocol/errors.js";
import { isObject, type JsonObject } from "../protocol/messages.js";
import { type InputRequest, InputRequiredError } from "./errors.js";
import type { InputContext, InputHandlers } from "./types.js";
import type { RequestOrigin } from "./wire.js";

/** Methods MRTR may carry, by the callback answering each (spec: patterns/mrtr). */
const CALLBACKS = {
  "elicitation/create": "elicitation",
  "sampling/createMessage": "sampling",
  "roots/list": "roots",
} as const;

/** The capabilities a client declares for the callbacks it was given, and only those. */
export function capabilitiesFor(handlers: InputHandlers): JsonObject {
  const capabilities: JsonObject = {};
  if (handlers.elicitation) capabilities.elicitation = { form: {} };
  if (handlers.sampling) capabilities.sampling = {};
  if (handlers.roots) capabilities.roots = {};
  return capabilities;
}

/** True when a callback can answer `method`. */
export function canAnswer(handlers: InputHandlers, method: string): boolean {
  const callback = CALLBACKS[method as keyof typeof CALLBACKS];
  return callback !== undefined && handlers[callback] !== undefined;
}

/**
 * The context of a legacy server request: the client request it came with, when known (it
 * arrived on that request's stream), whose signal also ends the wait for an answer.
 */
export function inputContextOf(origin: RequestOrigin | undefined): InputContext {
  const context: InputContext = { signal: origin?.signal ?? new AbortController().signal };
  if (!origin) return context;
  context.method = origin.request.method;
  const params = origin.request.params ?? {};
  const name = params.name ?? params.uri;
  if (typeof name === "string") context.name = name;
  return context;
}

/** Answers one input request or server request through the matching callback. */
export async function answerInput(
  handlers: InputHandlers,
  method: string,
  params: JsonObject | undefined,
  context: InputContext,
): Promise<JsonObject> {
  if (method === "ping") return {};
  if (method === "roots/list" && handlers.roots) {
    const roots = await handlers.roots(context);
    return Array.isArray(roots) ? { roots } : roots;
  }
  if (method === "elicitation/create" && handlers.elicitation) {
    return withDefaults(params ?? {}, await handlers.elicitation(params ?? {}, context));
  }
  if (method === "sampling/createMessage" && handlers.sampling) {
    return handlers.sampling(params ?? {}, context);
  }
  throw new McpError(ErrorCode.MethodNotFound, `The client cannot answer ${method}`);
}

/** The request a batch of input requests belongs to, for the callbacks' context. */
export interface InputOrigin {
  method: string;
  name?: string | undefined;
  signal: AbortSignal;
}

/**
 * Answers input requests through the callbacks, all at once, each with its key in its
 * context: the `inputResponses` to send back, keyed as the server keyed the requests.
 */
export async function answerInputRequests(
  requests: readonly (readonly [string, InputRequest])[],
  handlers: InputHandlers,
  origin: InputOrigin,
): Promise<JsonObject> {
  const answers = await Promise.all(
    requests.map(async ([key, request]) => {
      const context: InputContext = { method: origin.method, key, signal: origin.signal };
      if (origin.name !== undefined) context.name = origin.name;
      return [key, await answerInput(handlers, request.method, request.params, context)] as const;
    }),
  );
  return Object.fromEntries(answers);
}

/** What the `input_required` loop needs. */
export interface InputLoop {
  handlers: InputHandlers;
  /** Retries after the first request; beyond them `InputRequiredError` is thrown. */
  maxRounds: number;
  signal: AbortSignal;
  name?: string;
}

/**
 * Drives a request through `input_required` rounds: each round answers every input request
 * through the callbacks, then retries with the original params, `inputResponses` and the
 * exact `requestState`, under a new request id (spec: patterns/mrtr, client requirements).
 */
export async function withInput(
  method: string,
  params: JsonObject,
  send: (params: JsonObject) => Promise<JsonObject>,
  loop: InputLoop,
): Promise<JsonObject> {
  let current = params;
  for (let round = 0; ; round++) {
    const result = await send(current);
    if (result.resultType !== "input_required") return result;
    const requests = (isObject(result.inputRequests) ? result.inputRequests : {}) as Record<
      string,
      InputRequest
    >;
    const state = typeof result.requestState === "string" ? result.requestState : undefined;
    const unanswerable = Object.values(requests).find((r) => !canAnswer(loop.handlers, r.method));
    if (unanswerable || round >= loop.maxRounds) {
      const reason = unanswerable
        ? `no onInput callback answers ${unanswerable.method}`
        : `still needs input after ${loop.maxRounds} rounds`;
      throw new InputRequiredError(`${method}: ${reason}`, method, requests, state);
    }
    const entries = Object.entries(requests);
    const origin = { method, name: loop.name, signal: loop.signal };
    current = { ...params };
    if (entries.length > 0) {
      current.inputResponses = await answerInputRequests(entries, loop.handlers, origin);
    }
    if (state !== undefined) current.requestState = state;
  }
}

/**
 * Fills in the `default` of each form field an accepted answer left out, so a user who
 * skips a field sends what the server proposed (SEP-1034, elicitation defaults).
 */
function withDefaults(params: JsonObject, result: JsonObject): JsonObject {
  const schema = params.requestedSchema;
  if (result.action !== "accept" || !isObject(schema) || !isObject(schema.properties))
    return result;
  const content: JsonObject = isObject(result.content) ? { ...result.content } : {};
  for (const [name, field] of Object.entries(schema.properties)) {
    if (isObject(field) && field.default !== undefined && content[name] === undefined) {
      content[name] = field.default;
    }
  }
  return { ...result, content };
}
