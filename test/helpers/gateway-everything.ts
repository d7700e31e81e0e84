import { vi } from "vitest";
import type { GatewayLauncher, GatewayProcess } from "./gateway-process.js";

/**
 * How the single-process server-everything suites start their gateway: the real CLI,
 * `mcp-mount serve -- node <server-everything> stdio`, as a user runs it (the fleet suites run
 * test/helpers/gateway-server.ts, the same library calls in a script, on Redis).
 */
export const GATEWAY: GatewayLauncher = { kind: "cli", upstream: "everything" };

/**
 * Tools server-everything lists to every client, and those it registers only once its client
 * (here the gateway's upstream connection) declared elicitation and sampling.
 */
export const EVERYTHING_TOOLS = [
  "echo",
  "get-sum",
  "get-structured-content",
  "trigger-long-running-operation",
  "trigger-elicitation-request",
  "trigger-sampling-request",
];

/** An answer to server-everything's `trigger-elicitation-request` form that its schema accepts. */
export const EVERYTHING_ELICITED = {
  name: "Ada Lovelace",
  check: true,
  email: "ada@example.com",
  integer: 42,
};

/** What a client's sampling callback answers server-everything's `trigger-sampling-request`. */
export const EVERYTHING_SAMPLED = {
  role: "assistant",
  content: { type: "text", text: "from the test's model" },
  model: "test-model",
  stopReason: "endTurn",
};

/**
 * Waits until server-everything has asked the gateway for roots, 350 ms after it was
 * initialized and outside any call (it logs the gateway's refusal to its stderr, which the
 * gateway prints): a call in flight at that moment would be given the request (see
 * test/gateway/everything-roots.test.ts), and suites that test other things start after it.
 */
export async function everythingSettled(gateway: GatewayProcess): Promise<void> {
  await vi.waitFor(
    () => {
      if (!gateway.output().includes("[upstream] Failed to request roots from client"))
        throw new Error(`server-everything has not asked for roots yet:\n${gateway.output()}`);
    },
    { timeout: 10_000, interval: 50 },
  );
}
