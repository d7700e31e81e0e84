import type { McpClientOptions } from "../../client/options.js";
import type { InputHandlers } from "../../client/types.js";
import { ErrorCode, McpError } from "../../protocol/errors.js";

function unrouted(): never {
  throw new McpError(
    ErrorCode.InvalidRequest,
    "The gateway has no client to ask: the request came outside any call it forwards",
  );
}

/**
 * Input callbacks that declare elicitation, sampling and roots to the upstream at connect:
 * each forwarded call brings its own (`RequestOptions.onInput`), which reach the gateway's
 * client; these answer only a request that belongs to no call.
 */
const UNROUTED_INPUT: InputHandlers = {
  elicitation: unrouted,
  sampling: unrouted,
  roots: unrouted,
};

/**
 * The options of a gateway's upstream client: input declared as above unless given, and no
 * round-trip timeout unless given, as the client downstream decides how long a call may take
 * (and cancels it through the gateway).
 */
export function upstreamClientOptions(given: McpClientOptions = {}): McpClientOptions {
  return { timeoutMs: 0, ...given, onInput: given.onInput ?? UNROUTED_INPUT };
}
