import { describe, expect, it, vi } from "vitest";
import { serializeResult } from "../../src/http/responses.js";
import { createMcpHandler } from "../../src/index.js";
import type { JsonObject } from "../../src/protocol/messages.js";
import { McpServer } from "../../src/server/mcp-server.js";
import { serializedOnce } from "../../src/utils/json-text.js";
import { call, viaFetch } from "../helpers/modern.js";

// A result's text is written around its own serialisation, with a `_meta` kept as text (the
// server's, on every modern answer) spliced in last: where `_meta` is the result's last key (as
// decorate leaves it) it must read exactly as JSON.stringify of the whole message would, else
// parse to the same message; and it must leave the result as it found it.
describe("serializeResult", () => {
  const meta = serializedOnce({
    "io.modelcontextprotocol/serverInfo": { name: "s", version: "1" },
  });
  const plain = (result: unknown, id: string | number = 7) =>
    JSON.stringify({ jsonrpc: "2.0", id, result });

  it("should write what JSON.stringify writes, with the kept _meta last", () => {
    const results: JsonObject[] = [
      {
        content: [{ type: "text", text: 'a "quoted" \u2028 line' }],
        resultType: "complete",
        _meta: meta,
      },
      { _meta: meta },
      { tools: [], nextCursor: "c", _meta: meta },
      { content: [], _meta: { other: 1 } },
      { content: [] },
      {},
      // A value with its own toJSON: the whole result goes to JSON.stringify.
      { when: new Date(0), _meta: meta } as unknown as JsonObject,
      { content: [{ type: "text", text: "x", at: new Date(0) }], _meta: meta } as JsonObject,
    ];
    for (const result of results) {
      for (const id of [7, 'id-"x"', 0]) {
        const onError = vi.fn();
        const { body, text } = serializeResult(result, id, onError);
        expect(text).toBe(plain(result, id));
        expect(JSON.parse(text)).toEqual(JSON.parse(JSON.stringify(body)));
        expect(body).toEqual({ jsonrpc: "2.0", id, result });
        expect(onError).not.toHaveBeenCalled();
      }
    }
  });

  it("should write each server's own _meta when answers of two servers take turns", () => {
    const other = serializedOnce({
      "io.modelcontextprotocol/serverInfo": { name: "t", version: "2" },
    });
    for (let turn = 0; turn < 4; turn++) {
      const result: JsonObject = { content: [], _meta: turn % 2 === 0 ? meta : other };
      expect(serializeResult(result, turn, () => {}).text).toBe(plain(result, turn));
    }
  });

  it("should leave the result's _meta in place, and its order, also when serialising throws", () => {
    const result: JsonObject = { content: [], _meta: meta, resultType: "complete" };
    const { text } = serializeResult(result, 1, () => {});
    expect(result._meta).toBe(meta);
    expect(Object.keys(result)).toEqual(["content", "_meta", "resultType"]);
    expect(JSON.parse(text)).toEqual({ jsonrpc: "2.0", id: 1, result });

    const onError = vi.fn();
    const bad = { content: [{ type: "text", n: 1n }], _meta: meta } as unknown as JsonObject;
    const failed = serializeResult(bad, 2, onError);
    expect(bad._meta).toBe(meta);
    expect(onError).toHaveBeenCalledWith(expect.any(TypeError));
    expect(JSON.parse(failed.text)).toMatchObject({ id: 2, error: { code: -32603 } });
  });

  it("should honour a result's toJSON and take arrays as they are", () => {
    const custom = { _meta: meta, toJSON: () => ({ replaced: true }) } as unknown as JsonObject;
    expect(serializeResult(custom, 3, () => {}).text).toBe(plain(custom, 3));
    // Found as JSON.stringify finds it (a Get): a proxy that gives one without a `has` trap.
    const proxied = new Proxy(
      { content: [], _meta: meta },
      {
        get: (target, key) =>
          key === "toJSON" ? () => ({ replaced: 1 }) : Reflect.get(target, key),
      },
    ) as unknown as JsonObject;
    expect(serializeResult(proxied, 3, () => {}).text).toBe(plain(proxied, 3));
    const list = [1, "two"] as unknown as JsonObject;
    expect(serializeResult(list, 4, () => {}).text).toBe(plain(list, 4));
  });
});

describe("a server's info", () => {
  it("should be a frozen copy, so the _meta text kept for answers cannot go stale", async () => {
    const icons = [{ src: "https://example.com/i.png", sizes: ["48x48"] }];
    const server = new McpServer({ name: "frozen", version: "1.0.0", icons });
    server.tool({ name: "noop" }, () => "ok");
    expect(Object.isFrozen(server.info)).toBe(true);
    expect(Object.isFrozen(server.info.icons![0]!.sizes)).toBe(true);
    expect(() => {
      (server.info as { version: string }).version = "2.0.0";
    }).toThrow(TypeError);
    // The caller's objects are its own still.
    icons[0]!.sizes.push("96x96");
    const mcp = createMcpHandler(server);
    const { result } = await call(viaFetch(mcp.fetch), "tools/call", {
      name: "noop",
      arguments: {},
    });
    expect(result._meta).toEqual({
      "io.modelcontextprotocol/serverInfo": {
        name: "frozen",
        version: "1.0.0",
        icons: [{ src: "https://example.com/i.png", sizes: ["48x48"] }],
      },
    });
  });
});
