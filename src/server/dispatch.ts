import { ErrorCode, isMcpError, McpError } from "../protocol/errors.js";
import type { JsonObject } from "../protocol/messages.js";
import type { Telemetry } from "../telemetry/telemetry.js";
import { isThenable } from "../utils/thenable.js";
import { createContext, InputRequiredSignal, type TransportContext } from "./context.js";
import { type EraPolicy, eraPolicy } from "./era-policy.js";
import type { McpServer } from "./mcp-server.js";
import {
  type DispatchRequest,
  type DispatchServices,
  type Handler,
  handlerOf,
  type MethodCall,
  resourceHints,
} from "./method-handlers.js";
import { inputRequiredResult, needsInput, openRound, type Round } from "./multi-round.js";
import { tracedTransport } from "./traced-transport.js";

/** A handler's failure as the client sees it: JSON-RPC errors as they are, the rest internal. */
function toWireError(error: unknown, env: TransportContext): McpError {
  if (error instanceof InputRequiredSignal) {
    return new McpError(
      ErrorCode.InternalError,
      "Input was requested outside a multi round-trip request",
    );
  }
  if (isMcpError(error)) return error;
  env.onError?.(error);
  return new McpError(ErrorCode.InternalError, "Internal error");
}

/**
 * Propagate mode's message that carried no trace context has no operation of ours (it runs in the
 * context active when it arrived), but what its handler asks the client still carries that context.
 */
function propagating(telemetry: Telemetry | undefined, env: TransportContext): TransportContext {
  return telemetry && !telemetry.full && env.request && telemetry.live
    ? tracedTransport(telemetry, env)
    : env;
}

/**
 * Runs one request against the server and returns its result, decorated for the era
 * (`resultType`, serverInfo, cache hints). Rejects with {@link McpError} for JSON-RPC errors.
 * With telemetry, the request's span is the active context while its handler runs, and ends
 * with its answer.
 */
export function dispatch(
  server: McpServer,
  services: DispatchServices,
  request: DispatchRequest,
  env: TransportContext,
): Promise<JsonObject> {
  try {
    return Promise.resolve(dispatchNow(server, services, request, env));
  } catch (error) {
    return Promise.reject(error);
  }
}

/**
 * {@link dispatch} without a promise where none is needed: a handler that answers at once (a
 * tool whose validators and handler are synchronous) is answered at once, and a JSON-RPC error
 * may be thrown rather than rejected. Each promise resolved with a result costs a lookup of its
 * `then`, and each await a trip through the microtask queue, on every request.
 */
export function dispatchNow(
  server: McpServer,
  services: DispatchServices,
  request: DispatchRequest,
  env: TransportContext,
): JsonObject | Promise<JsonObject> {
  const operation = env.operation;
  if (!operation) return answer(server, services, request, propagating(services.telemetry, env));
  operation.claim();
  operation.describe(env.era, env.protocolVersion, env.sessionId);
  const traced = tracedTransport(services.telemetry, env);
  const ended = (result: JsonObject) => {
    operation.end({ result });
    return result;
  };
  const failed = (error: unknown): never => {
    operation.end(isMcpError(error) ? { error } : { exception: error });
    throw error;
  };
  let answered: JsonObject | Promise<JsonObject>;
  try {
    answered = operation.run(() => answer(server, services, request, traced));
  } catch (error) {
    return failed(error);
  }
  return isThenable(answered) ? answered.then(ended, failed) : ended(answered);
}

function answer(
  server: McpServer,
  services: DispatchServices,
  request: DispatchRequest,
  env: TransportContext,
): JsonObject | Promise<JsonObject> {
  const handler = handlerOf(server, services, request.method);
  if (!handler) {
    throw new McpError(ErrorCode.MethodNotFound, `Method not found: ${request.method}`);
  }
  const era = eraPolicy(env.era);
  const opened = era.multiRound(request.method, env)
    ? openRound(services, request, env)
    : undefined;
  // A first round is known at once: only a retry's redeeming is waited for.
  return isThenable(opened)
    ? opened.then((round) => inRound(server, services, request, env, era, handler, round))
    : inRound(server, services, request, env, era, handler, opened);
}

/** Runs the handler in `round` (none outside multi round-trips) and decorates its result. */
function inRound(
  server: McpServer,
  services: DispatchServices,
  request: DispatchRequest,
  env: TransportContext,
  era: EraPolicy,
  handler: Handler,
  round: Round | undefined,
): JsonObject | Promise<JsonObject> {
  if (round) env.operation?.round(round.number, round.previous);
  const ctx = createContext(env, request, round?.inputs, round?.state ?? {});
  const call: MethodCall = { server, ctx, params: request.params, env, services, era };
  let returned: JsonObject | Promise<JsonObject>;
  try {
    returned = handler(call);
  } catch (error) {
    return handlerFailed(call, request, round, error);
  }
  // Promise.resolve: a thenable of someone else's may not answer with a promise of its own.
  return isThenable(returned)
    ? Promise.resolve(returned).then(
        (result) => decorated(call, request, round, result),
        (error: unknown) => handlerFailed(call, request, round, error),
      )
    : decorated(call, request, round, returned);
}

/** The handler's result for the wire, or, when it asked for missing inputs, the round's end. */
function decorated(
  call: MethodCall,
  request: DispatchRequest,
  round: Round | undefined,
  result: JsonObject,
): JsonObject | Promise<JsonObject> {
  if (needsInput(round)) return askForInputs(call, request, round);
  const { server, env, era } = call;
  if (request.method === "resources/read")
    era.withCache(result, resourceHints(server, request.params.uri as string), env);
  return era.decorate(server, result);
}

function handlerFailed(
  call: MethodCall,
  request: DispatchRequest,
  round: Round | undefined,
  error: unknown,
): Promise<JsonObject> {
  // A handler that asked for missing inputs ends the round, whatever it threw.
  if (!needsInput(round)) throw toWireError(error, call.env);
  return askForInputs(call, request, round);
}

/** Ends a round whose handler asked for inputs the client has not given: `input_required`. */
async function askForInputs(
  { server, services, env, era, ctx }: MethodCall,
  request: DispatchRequest,
  round: Round,
): Promise<JsonObject> {
  env.operation?.inputRequired(Object.keys(round.inputs.pending));
  const asked = await inputRequiredResult(services, request, env, round, ctx.state);
  return era.decorate(server, asked);
}
