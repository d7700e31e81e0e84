import { describe, expect, it } from "vitest";
import { isPlainSchema } from "../../src/protocol/json-schema-plain.js";
import { compileSchema } from "../../src/server/schema.js";

const ECHO = {
  type: "object",
  properties: { text: { type: "string", minLength: 1, description: "What to echo" } },
  required: ["text"],
  additionalProperties: false,
};

describe("isPlainSchema", () => {
  it("should accept a tool schema made of common keywords with values they allow", () => {
    expect(isPlainSchema(ECHO)).toBe(true);
    expect(
      isPlainSchema({
        $schema: "http://json-schema.org/draft-07/schema#",
        type: ["array", "null"],
        items: { enum: ["a", "b"], default: "a" },
        maxItems: 3,
      }),
    ).toBe(true);
  });

  it("should send anything else to the meta-schema", () => {
    const plainWith = (extra: Record<string, unknown>) => ({ ...ECHO, ...extra });
    expect(isPlainSchema(plainWith({ $defs: { a: { type: "string" } } }))).toBe(false);
    expect(isPlainSchema(plainWith({ $id: "https://example.com/s" }))).toBe(false);
    expect(isPlainSchema(plainWith({ "x-mcp-header": "Region" }))).toBe(false);
    expect(isPlainSchema(plainWith({ required: ["text", "text"] }))).toBe(false);
    expect(isPlainSchema(plainWith({ minProperties: -1 }))).toBe(false);
    expect(isPlainSchema(plainWith({ type: "strin" }))).toBe(false);
    expect(isPlainSchema({ type: "object", properties: { a: { $ref: "#/$defs/a" } } })).toBe(false);
    expect(isPlainSchema({ type: "object", properties: { a: { minLength: "1" } } })).toBe(false);
  });
});

describe("compileSchema with the meta-schema check skipped for plain schemas", () => {
  it("should validate a plain schema as before", () => {
    const compiled = compileSchema(ECHO, "input");
    expect(compiled.validate({ text: "hi" })).toEqual({ ok: true, value: { text: "hi" } });
    expect(compiled.validate({ text: "" })).toMatchObject({ ok: false });
    expect(compiled.validate({ text: "hi", extra: 1 })).toMatchObject({ ok: false });
  });

  it("should still refuse, at registration, a schema the meta-schema rejects", () => {
    const bad = [
      { type: "object", properties: { a: { type: "string", minLength: "1" } } },
      { type: "object", required: "a" },
      { type: "object", properties: { a: { type: "string" } }, maxProperties: -1 },
    ];
    for (const schema of bad) expect(() => compileSchema(schema, "input")).toThrow(/schema/);
  });
});
