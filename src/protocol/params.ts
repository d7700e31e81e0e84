import { exceedsDepth } from "../utils/json-depth.js";
import { invalidParams, type McpError } from "./errors.js";

/**
 * Deepest nesting of objects and arrays accepted in a request's `params` (`params` itself is
 * level 1). JSON.parse copes with any depth; what walks params afterwards (the `requestState`
 * digest, schema validators, JSON.stringify) recurses, so deeper input is refused up front.
 */
export const MAX_PARAMS_DEPTH = 64;

/** The InvalidParams error for params nested deeper than {@link MAX_PARAMS_DEPTH}, if they are. */
export function paramsDepthError(params: unknown): McpError | undefined {
  if (!exceedsDepth(params, MAX_PARAMS_DEPTH)) return undefined;
  return invalidParams(
    `Invalid params: nested more than ${MAX_PARAMS_DEPTH} levels deep (objects and arrays)`,
    { maxDepth: MAX_PARAMS_DEPTH },
  );
}

/**
 * The error for a client's answer to a server request (elicitation, sampling, roots) nested
 * deeper than {@link MAX_PARAMS_DEPTH}, if it is: an answer is as untrusted as params. The
 * handler that asked gets it, as it gets any failure to obtain the answer.
 */
export function answerDepthError(method: string, answer: unknown): Error | undefined {
  if (!exceedsDepth(answer, MAX_PARAMS_DEPTH)) return undefined;
  return new Error(
    `The client's answer to ${method} is nested more than ${MAX_PARAMS_DEPTH} levels deep`,
  );
}
