import { describe, expect, it } from "vitest";
import { isHostAllowed } from "../../src/http/guards/origin.js";
import { createMcpHandler } from "../../src/index.js";
import { createFixtureServer } from "../helpers/fixture-server.js";
import { modernHeaders, modernMeta } from "../helpers/modern.js";

// The Host and Accept checks remember their last verdict (a client sends the same headers again
// and again): alternating values must each get their own verdict, never the one before.
describe("remembered verdicts", () => {
  it("should judge each Host on its own, whichever came before", () => {
    const cases: [string | null, string | undefined, boolean][] = [
      ["127.0.0.1:3000", "127.0.0.1", true],
      ["evil.example.com", "127.0.0.1", false],
      ["evil.example.com", "127.0.0.1", false],
      ["evil.example.com", "10.0.0.5", true],
      ["evil.example.com", "::1", false],
      ["localhost:3000", "::1", true],
      [null, "127.0.0.1", false],
      [null, undefined, true],
      ["EVIL.example.com", "127.0.0.1", false],
      ["127.0.0.1:3000", "127.0.0.1", true],
    ];
    for (let round = 0; round < 2; round++)
      for (const [host, local, verdict] of cases)
        expect(isHostAllowed(host, local, undefined), `${host} on ${local}`).toBe(verdict);
    // A list is checked as it is: a host allowed without one is not allowed by it.
    expect(isHostAllowed("127.0.0.1:3000", "127.0.0.1", ["mcp.example.com"])).toBe(false);
    expect(isHostAllowed("mcp.example.com:443", "127.0.0.1", ["mcp.example.com"])).toBe(true);
  });

  it("should judge each Accept header on its own, whichever came before", async () => {
    const mcp = createMcpHandler(createFixtureServer(), { secret: "s" });
    const body = JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "server/discover",
      params: { _meta: modernMeta() },
    });
    const send = (accept: string) =>
      mcp.fetch(
        new Request("http://localhost/mcp", {
          method: "POST",
          headers: { ...modernHeaders("server/discover"), accept },
          body,
        }),
      );
    const both = "application/json, text/event-stream";
    for (const [accept, status] of [
      [both, 200],
      ["application/json", 406],
      ["application/json", 406],
      [both, 200],
      ["text/event-stream", 406],
      ["*/*", 200],
      ["text/html", 406],
      [both, 200],
    ] as const) {
      expect((await send(accept)).status, accept).toBe(status);
    }
    await mcp.close();
  });
});
