import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { McpClient } from "../../src/client/index.js";
import { type GatewayProcess, startGateway } from "../helpers/gateway-process.js";

// A client's roots (its folders) stay with upstreams that are the client's own. server-everything
// speaks the legacy era on stdio, where its roots/list names no call: with one child for every
// client ("process" scope) the gateway refuses it, so the shared child never holds one client's
// roots for the next; with a child per session ("session" scope) the client answers it.

const ROOT = { uri: "file:///home/ada/private-project", name: "private project" };

describe.each(["process", "session"] as const)(
  "server-everything's get-roots-list (scope %s)",
  (scope) => {
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

    it(
      scope === "process"
        ? "should not hand the client's roots to the shared child"
        : "should answer with the client's roots",
      async () => {
        let asked = 0;
        const client = await McpClient.connect(gateway.url, {
          era: "legacy",
          onInput: {
            roots: () => {
              asked++;
              return [ROOT];
            },
          },
        });
        try {
          const result = await client.callTool("get-roots-list", {});
          const text = JSON.stringify(result.content);
          if (scope === "process") {
            expect(text).not.toContain(ROOT.uri);
            expect(asked).toBe(0);
          } else {
            expect(text).toContain(ROOT.uri);
            expect(asked).toBeGreaterThan(0);
          }
        } finally {
          await client.close();
        }
      },
    );
  },
);
