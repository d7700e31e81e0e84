import { expect } from "vitest";
import { call, type Exchange, viaUrl } from "./modern.js";

/** What the modern client of the input bridge tests declares: it can be asked and sampled. */
export const INPUT = { elicitation: { form: {} }, sampling: {} };

/** An elicitation answer accepting the form. */
export const accept = { action: "accept", content: { ok: true } };

/** A modern `tools/call` (a retry of `round.previous` when `round` is given) sent to `url`. */
export function callTool(
  url: string,
  name: string,
  args: Record<string, unknown>,
  round?: { previous: Exchange; inputResponses: Record<string, unknown> },
): Promise<Exchange> {
  const params: Record<string, unknown> = { name, arguments: args };
  if (round) {
    params.inputResponses = round.inputResponses;
    params.requestState = round.previous.result.requestState;
  }
  return call(viaUrl(url), "tools/call", params, { capabilities: INPUT });
}

/** The single input request of an `input_required` round, with its key. */
export function onlyInput(exchange: Exchange): {
  key: string;
  method: string;
  params: Record<string, unknown>;
} {
  expect(exchange.result.resultType).toBe("input_required");
  const entries = Object.entries(exchange.result.inputRequests as Record<string, never>);
  expect(entries).toHaveLength(1);
  const [key, request] = entries[0]!;
  return { key, ...(request as { method: string; params: Record<string, unknown> }) };
}
