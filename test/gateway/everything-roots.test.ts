import { afterAll, beforeAll, expect, it } from "vitest";
import { McpClient } from "../../src/client/index.js";
import { GATEWAY } from "../helpers/gateway-everything.js";
import { type GatewayProcess, startGateway } from "../helpers/gateway-process.js";

// server-everything asks its client for roots 350 ms after `initialize` (server/index.js,
// syncRoots), outside any call. On stdio a server request carries nothing that names the call
// it belongs to, so the gateway's client gives a request of unknown origin to the one call in
// flight with its own input callbacks, if there is exactly one. Such a call must not fail
// because its client cannot answer a request that was never its own: the upstream gets an
// error for its roots/list, as it would from a client without roots, and the call goes on.
// The call below starts as soon as the gateway listens, so it is in flight when the upstream
// asks (on a machine slow enough that it starts later, the test shows nothing, but passes).

let gateway: GatewayProcess;

beforeAll(async () => {
  gateway = await startGateway(GATEWAY);
});
afterAll(async () => {
  await gateway?.stop();
});

it("should finish a call in flight when the upstream asks a client without roots for its roots", async () => {
  const client = await McpClient.connect(gateway.url, { era: "modern" });
  const result = await client.callTool("trigger-long-running-operation", {
    duration: 1.5,
    steps: 3,
  });
  expect(result.content[0]).toMatchObject({ text: expect.stringContaining("Steps: 3.") });
  await client.close();
});
