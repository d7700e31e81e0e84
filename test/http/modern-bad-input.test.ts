import { describe, expect, it } from "vitest";
import { createMcpHandler } from "../../src/index.js";
import { suiteFixtureEndpoint } from "../helpers/fixture-endpoint.js";
import { createFixtureServer } from "../helpers/fixture-server.js";
import { call, modernHeaders, modernMeta, type Send } from "../helpers/modern.js";
import { TRANSPORTS } from "../helpers/transports.js";

// The modern era through each transport: malformed and oversized requests, and notifications.
describe.each(TRANSPORTS)("modern era through %s", (transport) => {
  const send: Send = suiteFixtureEndpoint(transport, { secret: "test-secret" }).send;

  describe("bad input", () => {
    const good = () =>
      call(send, "tools/call", { name: "echo", arguments: { text: "still here" } });
    const post = (body: string, headers: Record<string, string> = modernHeaders("tools/list")) =>
      send({ method: "POST", headers, body });

    it.each(["GET", "DELETE"])(
      "should answer %s without a session with 400 on a dual-era endpoint",
      async (method) => {
        const response = await send({ method, headers: { accept: "text/event-stream" } });
        expect(response.status).toBe(400);
        expect(JSON.parse(response.text).error.code).toBe(-32600);
        expect((await good()).result.content).toEqual([{ type: "text", text: "still here" }]);
      },
    );

    it.each(["GET", "DELETE"])("should answer %s with 405 when legacy is off", async (method) => {
      const modernOnly = createMcpHandler(createFixtureServer(), { secret: "s", legacy: false });
      const response = await modernOnly.fetch(
        new Request("http://127.0.0.1/mcp", { method, headers: { accept: "text/event-stream" } }),
      );
      expect(response.status).toBe(405);
      expect(response.headers.get("allow")).toBe("POST");
      expect((await response.json()).error.code).toBe(-32600);
      await modernOnly.close();
    });

    it("should answer each malformed request with its status and JSON-RPC code, and keep serving", async () => {
      const headers = modernHeaders("tools/list");
      const cases: [string, Promise<{ status: number; text: string }>, number, number][] = [
        ["malformed JSON", post("{not json"), 400, -32700],
        ["batch", post("[]"), 400, -32600],
        ["not an object", post("42"), 400, -32600],
        ["no method", post('{"jsonrpc":"2.0","id":1}'), 400, -32600],
        ["null id", post('{"jsonrpc":"2.0","id":null,"method":"tools/list"}'), 400, -32600],
        ["a response", post('{"jsonrpc":"2.0","id":1,"result":{}}'), 400, -32600],
        ["text/plain", post("{}", { ...headers, "content-type": "text/plain" }), 415, -32600],
        ["no SSE in Accept", post("{}", { ...headers, accept: "application/json" }), 406, -32600],
        ["foreign Origin", post("{}", { ...headers, origin: "http://evil.example" }), 403, -32600],
        [
          "no _meta",
          post('{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{}}'),
          400,
          -32602,
        ],
        [
          "unknown method",
          call(send, "no/such").then((e) => ({
            status: e.status,
            text: JSON.stringify(e.response),
          })),
          404,
          -32601,
        ],
        [
          "ping does not exist in this era",
          call(send, "ping").then((e) => ({ status: e.status, text: JSON.stringify(e.response) })),
          404,
          -32601,
        ],
      ];
      for (const [label, pending, status, code] of cases) {
        const response = await pending;
        expect(response.status, label).toBe(status);
        expect(JSON.parse(response.text).error.code, label).toBe(code);
      }
      expect((await good()).status).toBe(200);
    });

    it("should answer 413 to a body over the limit", async () => {
      const big = JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "tools/list",
        params: { pad: "x".repeat(5 * 1024 * 1024), _meta: modernMeta() },
      });
      const response = await post(big);
      expect(response.status).toBe(413);
      expect(JSON.parse(response.text).error.code).toBe(-32600);
      expect((await good()).status).toBe(200);
    });

    it("should accept a notification with 202 and no body", async () => {
      const response = await post(
        JSON.stringify({
          jsonrpc: "2.0",
          method: "notifications/whatever",
          params: { _meta: modernMeta() },
        }),
      );
      expect(response.status).toBe(202);
      expect(response.text).toBe("");
    });
  });
});
