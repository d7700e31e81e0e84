import { describe, expect, it } from "vitest";
import { suiteFixtureEndpoint } from "../helpers/fixture-endpoint.js";
import {
  LEGACY_VERSION,
  legacyCall,
  legacyHeaders,
  openSession,
  readLegacy,
} from "../helpers/legacy.js";
import { call, type Send } from "../helpers/modern.js";
import { TRANSPORTS } from "../helpers/transports.js";

// The legacy era (2025-11-25) through each transport: initialize, requests in a session, and the
// session rules.
describe.each(TRANSPORTS)("legacy era through %s", (transport) => {
  const send: Send = suiteFixtureEndpoint(transport, {
    secret: "s",
    legacy: { maxSessions: 1_000 },
  }).send;

  describe("initialize", () => {
    it("should negotiate the client's version and open a session with a strong visible-ASCII id", async () => {
      const response = await send({
        method: "POST",
        headers: legacyHeaders(undefined, "2025-06-18"),
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "initialize",
          params: {
            protocolVersion: "2025-06-18",
            capabilities: {},
            clientInfo: { name: "c", version: "1" },
          },
        }),
      });
      const exchange = readLegacy(response, "initialize");
      expect(exchange.result).toMatchObject({
        protocolVersion: "2025-06-18",
        serverInfo: { name: "fixture", version: "1.0.0" },
        instructions: "Fixture server for tests",
        capabilities: { tools: { listChanged: true }, resources: { subscribe: true }, logging: {} },
      });
      const sessionId = response.headers.get("mcp-session-id") ?? "";
      expect(sessionId).toMatch(/^[\x21-\x7E]{22,}$/);
    });

    it("should answer an unsupported version with its latest legacy version", async () => {
      const response = await send({
        method: "POST",
        headers: legacyHeaders(undefined, "2025-03-26"),
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "initialize",
          params: {
            protocolVersion: "2024-01-01",
            capabilities: {},
            clientInfo: { name: "c", version: "1" },
          },
        }),
      });
      expect(readLegacy(response, "initialize").result.protocolVersion).toBe(LEGACY_VERSION);
    });

    it("should treat initialize carrying modern _meta as legacy", async () => {
      const response = await send({
        method: "POST",
        headers: legacyHeaders(),
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "initialize",
          params: {
            protocolVersion: LEGACY_VERSION,
            capabilities: {},
            clientInfo: { name: "c", version: "1" },
            _meta: {
              "io.modelcontextprotocol/protocolVersion": "2026-07-28",
              "io.modelcontextprotocol/clientCapabilities": {},
            },
          },
        }),
      });
      expect(response.status).toBe(200);
      expect(response.headers.get("mcp-session-id")).toBeTruthy();
    });
  });

  describe("in a session", () => {
    it("should serve tools, prompts, resources and completion without modern fields", async () => {
      const session = await openSession(send);
      const tools = await legacyCall(send, session, "tools/list");
      expect((tools.result.tools as { name: string }[])[0]?.name).toBe("echo");
      expect(tools.result.ttlMs).toBeUndefined();
      const echo = await legacyCall(send, session, "tools/call", {
        name: "echo",
        arguments: { text: "hi" },
      });
      expect(echo.result).toEqual({ content: [{ type: "text", text: "hi" }] });
      const prompt = await legacyCall(send, session, "prompts/get", {
        name: "greet",
        arguments: { who: "Ada" },
      });
      expect(prompt.result.messages).toHaveLength(1);
      const read = await legacyCall(send, session, "resources/read", { uri: "test://static" });
      expect(read.result.contents).toEqual([
        { uri: "test://static", mimeType: "text/plain", text: "static text" },
      ]);
      const completion = await legacyCall(send, session, "completion/complete", {
        ref: { type: "ref/prompt", name: "greet" },
        argument: { name: "who", value: "b" },
      });
      expect(completion.result.completion).toMatchObject({ values: ["bob"] });
    });

    it("should answer an unknown resource with -32002", async () => {
      const session = await openSession(send);
      const { status, error } = await legacyCall(send, session, "resources/read", {
        uri: "test://missing",
      });
      expect(status).toBe(200);
      expect(error?.code).toBe(-32002);
    });

    it("should answer ping, logging/setLevel and resources/(un)subscribe with {}", async () => {
      const session = await openSession(send);
      for (const [method, params] of [
        ["ping", undefined],
        ["logging/setLevel", { level: "warning" }],
        ["resources/subscribe", { uri: "test://static" }],
        ["resources/unsubscribe", { uri: "test://static" }],
      ] as const) {
        const exchange = await legacyCall(send, session, method, params);
        expect(exchange.result, method).toEqual({});
      }
      const bad = await legacyCall(send, session, "logging/setLevel", { level: "loud" });
      expect(bad.error?.code).toBe(-32602);
    });

    it("should filter log messages by the session's level", async () => {
      const session = await openSession(send);
      await legacyCall(send, session, "logging/setLevel", { level: "warning" });
      const exchange = await legacyCall(send, session, "tools/call", {
        name: "steps",
        arguments: {},
      });
      const logs = exchange.messages.filter((m) => m.method === "notifications/message");
      expect(logs.map((m) => (m.params as { level: string }).level)).toEqual(["warning"]);
      const all = await openSession(send);
      const verbose = await legacyCall(send, all, "tools/call", { name: "steps", arguments: {} });
      expect(verbose.messages.filter((m) => m.method === "notifications/message")).toHaveLength(2);
    });

    it("should tell the tool when the client lacks a capability", async () => {
      const session = await openSession(send);
      const exchange = await legacyCall(send, session, "tools/call", {
        name: "confirm",
        arguments: {},
      });
      expect(exchange.result.isError).toBe(true);
      expect(JSON.stringify(exchange.result.content)).toContain("does not support elicitation");
    });
  });

  describe("session rules", () => {
    it("should answer a missing session id 400, an unknown one 404, and a bad version header 400", async () => {
      expect((await legacyCall(send, undefined, "tools/list")).status).toBe(400);
      const unknown = await legacyCall(send, "no-such-session", "tools/list");
      expect(unknown.status).toBe(404);
      expect(unknown.error?.code).toBe(-32600);
      const session = await openSession(send);
      const badVersion = await legacyCall(send, session, "tools/list", undefined, {
        "mcp-protocol-version": "1999-01-01",
      });
      expect(badVersion.status).toBe(400);
      const { "mcp-protocol-version": _drop, ...noVersion } = legacyHeaders(session);
      const absent = await send({
        method: "POST",
        headers: noVersion,
        body: JSON.stringify({ jsonrpc: "2.0", id: 5, method: "ping" }),
      });
      expect(absent.status).toBe(200);
    });

    it("should end a session on DELETE, and answer 404 afterwards and to a second DELETE", async () => {
      const session = await openSession(send);
      const first = await send({ method: "DELETE", headers: legacyHeaders(session) });
      expect(first.status).toBe(200);
      expect((await legacyCall(send, session, "tools/list")).status).toBe(404);
      expect((await send({ method: "DELETE", headers: legacyHeaders(session) })).status).toBe(404);
      // The endpoint keeps serving everyone else, both eras.
      expect((await call(send, "tools/list")).status).toBe(200);
    });

    it("should answer a reply to an unknown server request with 404", async () => {
      const session = await openSession(send);
      const response = await send({
        method: "POST",
        headers: legacyHeaders(session),
        body: JSON.stringify({ jsonrpc: "2.0", id: "s999-nope", result: {} }),
      });
      expect(response.status).toBe(404);
      expect(JSON.parse(response.text).error.code).toBe(-32600);
    });
  });
});
