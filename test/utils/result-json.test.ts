import { describe, expect, it } from "vitest";
import type { JsonObject } from "../../src/protocol/messages.js";
import { resultFields } from "../../src/utils/result-json.js";

/** A small deterministic generator, so a failing case repeats. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2_147_483_648;
    return state / 2_147_483_648;
  };
}

/** Strings that JSON.stringify writes as they are, and every kind it escapes. */
const STRINGS = [
  "",
  "hello",
  'a "quoted" word',
  "back\\slash",
  "line\nbreak\ttab\r\u0000\u001f\u007f",
  "caf\u00e9 \u2028 \u2029",
  "pair \ud83d\ude00 emoji",
  "lone \ud800 high",
  "lone \udfff low",
  "x".repeat(127),
  `${"y".repeat(128)}"`,
  "z".repeat(5_000),
  "\u4e2d\u6587",
];

function pick<T>(next: () => number, values: readonly T[]): T {
  return values[Math.floor(next() * values.length)]!;
}

/** Any JSON-ish value, with what JSON.stringify leaves out or writes as null. */
function anyValue(next: () => number, depth: number): unknown {
  const kind = Math.floor(next() * (depth > 2 ? 7 : 10));
  switch (kind) {
    case 0:
      return pick(next, STRINGS);
    case 1:
      return next() < 0.5;
    case 2:
      return pick(next, [0, -0, 1.5, 1e21, Number.NaN, Number.POSITIVE_INFINITY, -7]);
    case 3:
      return null;
    case 4:
      return undefined;
    case 5:
      return () => 1;
    case 6:
      return Symbol("s");
    case 7:
      return Array.from({ length: Math.floor(next() * 3) }, () => anyValue(next, depth + 1));
    case 8:
      return pick(next, [
        new Date(0),
        new String("boxed"),
        new Number(5),
        new Boolean(false),
        Object.assign(() => 0, { toJSON: (key: string) => `fn at ${key}` }),
        "complete",
      ]);
    default:
      return anyObject(next, depth + 1, ["a", "b", "\u00e9", '"q"', "3"]);
  }
}

function anyObject(next: () => number, depth: number, keys: readonly string[]) {
  const object: Record<string, unknown> = {};
  const count = Math.floor(next() * 4);
  for (let i = 0; i < count; i++) object[pick(next, keys)] = anyValue(next, depth);
  return object;
}

/** A content block: mostly `{ type, text }`, sometimes with more fields or none of them. */
function anyBlock(next: () => number): unknown {
  const roll = next();
  if (roll < 0.5) return { type: "text", text: pick(next, STRINGS) };
  if (roll < 0.6) return { text: pick(next, STRINGS), type: "text" };
  if (roll < 0.7) return { type: 7, text: null };
  if (roll < 0.9)
    return {
      type: "image",
      ...anyObject(next, 1, ["data", "mimeType", "annotations", "_meta", "type"]),
    };
  return anyValue(next, 1);
}

function anyResult(next: () => number): JsonObject {
  const result: Record<string, unknown> = {};
  const keys = ["content", "resultType", "isError", "structuredContent", "_meta", "1", 'k"ey'];
  const count = 1 + Math.floor(next() * 4);
  for (let i = 0; i < count; i++) {
    const key = pick(next, keys);
    result[key] =
      key === "content" && next() < 0.9
        ? Array.from({ length: Math.floor(next() * 3) }, () => anyBlock(next))
        : key === "resultType" && next() < 0.8
          ? "complete"
          : anyValue(next, 1);
  }
  return result as JsonObject;
}

/** What `resultFields` writes, in braces; or JSON.stringify's where it declined. */
function written(result: JsonObject, skip?: string): string {
  const fields = resultFields(result, skip);
  return fields === undefined ? JSON.stringify(result) : `{${fields}}`;
}

describe("resultFields", () => {
  it("should write a text result as JSON.stringify does", () => {
    const result = {
      content: [{ type: "text", text: "hello" }],
      resultType: "complete",
    } as JsonObject;
    expect(resultFields(result)).toBe(
      '"content":[{"type":"text","text":"hello"}],"resultType":"complete"',
    );
  });

  it("should write every generated result as JSON.stringify does", () => {
    const next = random(11);
    let writtenHere = 0;
    for (let i = 0; i < 5_000; i++) {
      const result = anyResult(next);
      if (resultFields(result) !== undefined) writtenHere++;
      expect(written(result)).toBe(JSON.stringify(result));
    }
    // Most of them by the writer itself, not by declining to JSON.stringify.
    expect(writtenHere).toBeGreaterThan(4_000);
  });

  it("should write every string as JSON.stringify does, escapes and surrogates included", () => {
    for (const text of STRINGS) {
      const result = { content: [{ type: "text", text }], resultType: text } as JsonObject;
      expect(written(result)).toBe(JSON.stringify(result));
    }
    for (let code = 0; code < 0x10000; code++) {
      const text = `a${String.fromCharCode(code)}b`;
      expect(resultFields({ content: [{ text }] } as JsonObject)).toBe(
        JSON.stringify({ content: [{ text }] }).slice(1, -1),
      );
    }
  });

  it("should leave out the key it is told to skip", () => {
    const result = { content: [], _meta: { a: 1 }, isError: true } as JsonObject;
    expect(resultFields(result, "_meta")).toBe('"content":[],"isError":true');
  });

  it("should decline a value whose own toJSON would be called with its key", () => {
    const keyed = { toJSON: (key: string) => `at ${key}` };
    for (const result of [
      { content: [keyed] },
      { content: [{ type: "text", text: "x", extra: keyed }] },
      { structuredContent: keyed },
      { content: Object.assign([], { toJSON: () => "array" }) },
    ]) {
      expect(resultFields(result as unknown as JsonObject)).toBeUndefined();
      expect(written(result as unknown as JsonObject)).toBe(JSON.stringify(result));
    }
  });

  it("should decline an array, which JSON.stringify writes as one", () => {
    expect(resultFields([1, "two"] as unknown as JsonObject)).toBeUndefined();
  });

  it("should write boxed values, class instances and null-prototype objects as JSON.stringify does", () => {
    class Block {
      type = "text";
      text = "from a class";
    }
    const bare = Object.assign(Object.create(null), { type: "text", text: "no prototype" });
    for (const result of [
      { content: [new String("ab"), new Number(5), new Boolean(false), new Block(), bare] },
      { content: new String("ab") },
      { status: "complete", resultType: "complete" },
    ]) {
      expect(written(result as unknown as JsonObject)).toBe(JSON.stringify(result));
    }
    for (const result of [new String("ab"), new Block(), bare]) {
      expect(resultFields(result as unknown as JsonObject)).toBeUndefined();
    }
  });

  it("should decline a function's or a BigInt's toJSON, and one a proxy gives", () => {
    const fn = Object.assign(() => 0, { toJSON: (key: string) => `fn at ${key}` });
    const proxied = new Proxy(
      { type: "text", text: "x" },
      { get: (target, key) => (key === "toJSON" ? () => "X" : Reflect.get(target, key)) },
    );
    for (const result of [{ fn }, { content: [fn] }, { content: [proxied] }]) {
      expect(written(result as unknown as JsonObject)).toBe(JSON.stringify(result));
    }
    const prototype = BigInt.prototype as { toJSON?: (key: string) => string };
    prototype.toJSON = (key: string) => `big at ${key}`;
    try {
      const result = { n: 1n, content: [{ type: "text", text: "x", m: 2n }] };
      expect(written(result as unknown as JsonObject)).toBe(JSON.stringify(result));
    } finally {
      delete prototype.toJSON;
    }
  });

  it("should throw where JSON.stringify throws: a BigInt, a cycle", () => {
    const cycle: Record<string, unknown> = { type: "text" };
    cycle.self = cycle;
    expect(() => resultFields({ content: [cycle] } as JsonObject)).toThrow(TypeError);
    expect(() => resultFields({ structuredContent: { n: 1n } } as JsonObject)).toThrow(TypeError);
  });
});
