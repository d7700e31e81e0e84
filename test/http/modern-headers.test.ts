import { describe, expect, it } from "vitest";
import { suiteFixtureEndpoint } from "../helpers/fixture-endpoint.js";
import { modernHeaders, modernMeta, type Send } from "../helpers/modern.js";
import { TRANSPORTS } from "../helpers/transports.js";

// The modern era through each transport: headers that mirror the body, and version checks.
describe.each(TRANSPORTS)("modern era through %s", (transport) => {
  const send: Send = suiteFixtureEndpoint(transport, { secret: "test-secret" }).send;

  describe("headers mirrored from the body", () => {
    const body = (method: string, params: Record<string, unknown>) =>
      JSON.stringify({ jsonrpc: "2.0", id: 1, method, params: { ...params, _meta: modernMeta() } });
    const raw = async (
      headers: Record<string, string>,
      method: string,
      params: Record<string, unknown>,
    ) => {
      const response = await send({ method: "POST", headers, body: body(method, params) });
      return { status: response.status, body: JSON.parse(response.text) };
    };
    const echo = { name: "echo", arguments: { text: "x" } };

    it("should answer -32020 when a required header is missing or differs", async () => {
      const base = modernHeaders("tools/call", "echo");
      const cases: Record<string, string | undefined>[] = [
        { "mcp-protocol-version": undefined },
        { "mcp-method": undefined },
        { "mcp-name": undefined },
        { "mcp-method": "tools/list" },
        { "mcp-name": "other" },
      ];
      for (const change of cases) {
        const headers: Record<string, string> = { ...base };
        for (const [key, value] of Object.entries(change)) {
          if (value === undefined) delete headers[key];
          else headers[key] = value;
        }
        const { status, body: reply } = await raw(headers, "tools/call", echo);
        expect(status, JSON.stringify(change)).toBe(400);
        expect(reply.error.code).toBe(-32020);
      }
    });

    it("should decode a base64 sentinel Mcp-Name before comparing", async () => {
      const headers = { ...modernHeaders("tools/call"), "mcp-name": `=?base64?${btoa("echo")}?=` };
      const { status, body: reply } = await raw(headers, "tools/call", echo);
      expect(status).toBe(200);
      expect(reply.result.content).toEqual([{ type: "text", text: "x" }]);
    });

    it("should check Mcp-Param headers against x-mcp-header arguments", async () => {
      const args = { region: "日本", count: 42, query: "q" };
      const headers = {
        ...modernHeaders("tools/call", "regional"),
        "mcp-param-region": `=?base64?${Buffer.from("日本").toString("base64")}?=`,
        "mcp-param-count": "42.0",
      };
      const ok = await raw(headers, "tools/call", { name: "regional", arguments: args });
      expect(ok.status).toBe(200);
      expect(ok.body.result.content[0].text).toBe("日本:42:q");
      const missing = await raw({ ...headers, "mcp-param-count": "" }, "tools/call", {
        name: "regional",
        arguments: args,
      });
      expect(missing.body.error.code).toBe(-32020);
      const { "mcp-param-region": _drop, ...withoutRegion } = headers;
      const absent = await raw(withoutRegion, "tools/call", { name: "regional", arguments: args });
      expect(absent.status).toBe(400);
      expect(absent.body.error.code).toBe(-32020);
      const wrong = await raw({ ...headers, "mcp-param-count": "41" }, "tools/call", {
        name: "regional",
        arguments: args,
      });
      expect(wrong.body.error.code).toBe(-32020);
      const omitted = await raw(modernHeaders("tools/call", "regional"), "tools/call", {
        name: "regional",
        arguments: { query: "q" },
      });
      expect(omitted.status).toBe(200);
    });

    it("should read an integer Mcp-Param header as a decimal only, so no other notation equals it", async () => {
      const args = { region: "eu", count: 42, query: "q" };
      const withCount = (count: string) =>
        raw(
          {
            ...modernHeaders("tools/call", "regional"),
            "mcp-param-region": "eu",
            "mcp-param-count": count,
          },
          "tools/call",
          { name: "regional", arguments: args },
        );
      for (const count of ["42", "42.0", "42.00"])
        expect((await withCount(count)).status, count).toBe(200);
      const notations = ["0x2A", "0b101010", "0o52", "4_2", "1e1", "4.2e1", "+42", "042", "42."];
      for (const count of [...notations, "42.5", "Infinity", "=?base64?MHgyQQ==?="]) {
        const { status, body: reply } = await withCount(count);
        expect(status, count).toBe(400);
        expect(reply.error.code, count).toBe(-32020);
      }
    });

    it("should refuse a mirrored value beyond visible ASCII, space and tab, by its characters", async () => {
      const named = (name: string) =>
        raw({ ...modernHeaders("tools/call"), "mcp-name": name }, "tools/call", echo);
      const latin = await named("ech\u00f6");
      expect(latin.status).toBe(400);
      expect(latin.body.error.code).toBe(-32020);
      expect(latin.body.error.message).toContain("Mcp-Name header has invalid characters");
      // A tab and a space are field-value characters: read, then compared with the body.
      const spaced = await named("ec\t h o");
      expect(spaced.status).toBe(400);
      expect(spaced.body.error.message).toContain("does not match body value");
    });

    it("should reject a malformed base64 sentinel and take an unwrapped value literally", async () => {
      const args = { region: "Hello", query: "q" };
      const send1 = (region: string) =>
        raw(
          { ...modernHeaders("tools/call", "regional"), "mcp-param-region": region },
          "tools/call",
          {
            name: "regional",
            arguments: args,
          },
        );
      expect((await send1("=?base64?SGVsbG8=?=")).status).toBe(200);
      for (const bad of ["=?base64?SGVsbG8?=", "=?base64?SGVs!!!bG8=?="]) {
        const { status, body: reply } = await send1(bad);
        expect(status, bad).toBe(400);
        expect(reply.error.code).toBe(-32020);
      }
      const literal = await raw(
        { ...modernHeaders("tools/call", "regional"), "mcp-param-region": "=?base64?SGVsbG8=" },
        "tools/call",
        { name: "regional", arguments: { region: "=?base64?SGVsbG8=", query: "q" } },
      );
      expect(literal.status).toBe(200);
    });

    it("should answer a version header that disagrees with the body with -32020, before the version check", async () => {
      const response = await send({
        method: "POST",
        headers: modernHeaders("server/discover"),
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 302,
          method: "server/discover",
          params: {
            _meta: { ...modernMeta(), "io.modelcontextprotocol/protocolVersion": "v999.0.0" },
          },
        }),
      });
      expect(response.status).toBe(400);
      expect(JSON.parse(response.text)).toMatchObject({ id: 302, error: { code: -32020 } });
    });

    it("should answer -32022 with the supported versions for an unknown version", async () => {
      const response = await send({
        method: "POST",
        headers: { ...modernHeaders("tools/list"), "mcp-protocol-version": "2099-01-01" },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 9,
          method: "tools/list",
          params: {
            _meta: { ...modernMeta(), "io.modelcontextprotocol/protocolVersion": "2099-01-01" },
          },
        }),
      });
      expect(response.status).toBe(400);
      expect(JSON.parse(response.text)).toEqual({
        jsonrpc: "2.0",
        id: 9,
        error: {
          code: -32022,
          message: "Unsupported protocol version: 2099-01-01",
          data: { supported: ["2026-07-28"], requested: "2099-01-01" },
        },
      });
    });

    it("should answer -32602 with HTTP 400 when clientCapabilities is missing", async () => {
      const response = await send({
        method: "POST",
        headers: modernHeaders("tools/list"),
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "tools/list",
          params: { _meta: { "io.modelcontextprotocol/protocolVersion": "2026-07-28" } },
        }),
      });
      expect(response.status).toBe(400);
      expect(JSON.parse(response.text).error.code).toBe(-32602);
    });
  });
});
