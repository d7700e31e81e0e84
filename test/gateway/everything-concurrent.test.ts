import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { McpClient } from "../../src/client/index.js";
import { EVERYTHING_ELICITED } from "../helpers/gateway-everything.js";
import { type GatewayProcess, startGateway } from "../helpers/gateway-process.js";

// Two legacy clients whose calls to server-everything's elicitation tool are in flight at once.
// server-everything speaks the legacy era on stdio, where a server request names no call: with
// one child for the whole gateway ("process" scope) the gateway cannot tell whose question it
// is, and must refuse it (the upstream's tool reports the error) rather than ask the wrong
// client; with a child per session ("session" scope) each question has one possible asker.

/** Each client answers with its own name, so an answer that reached the wrong call shows. */
async function askBoth(url: string): Promise<string[]> {
  const names = ["Ada Lovelace", "Grace Hopper"];
  const clients = await Promise.all(
    names.map((name) =>
      McpClient.connect(url, {
        era: "legacy",
        onInput: {
          elicitation: () => ({ action: "accept", content: { ...EVERYTHING_ELICITED, name } }),
        },
      }),
    ),
  );
  const results = await Promise.all(
    clients.map((client) => client.callTool("trigger-elicitation-request", {})),
  );
  for (const client of clients) await client.close();
  return results.map((result) => JSON.stringify(result.content));
}

describe.each(["process", "session"] as const)("two elicitations at once (scope %s)", (scope) => {
  let gateway: GatewayProcess;

  beforeAll(async () => {
    gateway = await startGateway({
      kind: "script",
      upstream: "everything",
      env: { GATEWAY_SCOPE: scope },
    });
  });
  afterAll(async () => {
    await gateway?.stop();
  });

  it("should never give one client's answer to the other's call", async () => {
    const [first, second] = await askBoth(gateway.url);
    expect(first).not.toContain("- Name: Grace Hopper");
    expect(second).not.toContain("- Name: Ada Lovelace");
    // Each call gets its own client's answer, or the upstream's tool reports the refusal.
    expect(first).toMatch(/- Name: Ada Lovelace|no client to ask/);
    expect(second).toMatch(/- Name: Grace Hopper|no client to ask/);
    if (scope === "session") {
      expect(first).toContain("- Name: Ada Lovelace");
      expect(second).toContain("- Name: Grace Hopper");
    }
  });
});
