import { afterEach, describe, expect, it } from "vitest";
import { callLeaseKey } from "../../src/gateway/pending-channels.js";
import { createMcpHandler, McpServer, memoryStore } from "../../src/index.js";
import { createStateSealer } from "../../src/server/request-state.js";
import { serve, startBridgeGateway } from "../helpers/input-bridge-harness.js";
import { callTool, onlyInput } from "../helpers/input-bridge-rounds.js";

// An upstream call left waiting for a modern client's answer (parked) that ends on its own
// before any retry (the upstream stopped waiting): the gateway must still let go of it within
// inputTimeoutMs (its lease, its bus channel, its renewal timer), not hold it for ever.

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** An upstream whose tool asks, then stops waiting for the answer and ends by itself. */
function impatientUpstream(gaveUp: () => void): McpServer {
  const server = new McpServer({ name: "impatient", version: "1.0.0" });
  server.tool({ name: "impatient" }, async (_args, ctx) => {
    const asking = ctx.elicit("confirm", {
      mode: "form",
      message: "Quick?",
      requestedSchema: { type: "object", properties: { ok: { type: "boolean" } } },
    });
    asking.catch(() => {});
    await new Promise((resolve) => setTimeout(resolve, 100));
    gaveUp();
    return "gave up waiting";
  });
  return server;
}

describe("a parked upstream call that ends before the client retries", () => {
  it("should be let go of (lease released) once inputTimeoutMs passed", async () => {
    let ended = false;
    const upstream = await serve(
      createMcpHandler(
        impatientUpstream(() => (ended = true)),
        { legacy: true },
      ),
    );
    cleanups.push(() => upstream.close());
    const store = memoryStore();
    const errors: unknown[] = [];
    const gateway = await startBridgeGateway({
      store,
      upstreamUrl: upstream.url,
      upstreamEra: "legacy",
      inputTimeoutMs: 2_000,
      errors,
    });
    cleanups.push(() => gateway.close());
    const first = await callTool(gateway.url, "impatient", {});
    onlyInput(first);
    const sealed = await createStateSealer("input-bridge-tests").open(
      String(first.result.requestState),
    );
    const call = String((sealed?.state.gateway as { call?: string } | undefined)?.call);
    expect(await store.leases.holder(callLeaseKey(call))).toBe(gateway.processId);
    await expect.poll(() => ended).toBe(true);
    // No retry comes: the call, ended upstream, is dropped once the input timeout passes.
    await expect
      .poll(() => store.leases.holder(callLeaseKey(call)), { timeout: 10_000 })
      .toBeUndefined();
    expect(errors).toEqual([]);
  });
});
