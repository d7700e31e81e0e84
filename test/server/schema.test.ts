import { describe, expect, it } from "vitest";
import * as z from "zod";
import { compileSchema, simplifyNullable } from "../../src/server/schema.js";

describe("compileSchema", () => {
  it("should validate with JSON Schema 2020-12 by default and keep the schema as written", () => {
    const schema = {
      $schema: "https://json-schema.org/draft/2020-12/schema",
      type: "object",
      $defs: { name: { $anchor: "nm", type: "string", minLength: 1 } },
      properties: { name: { $ref: "#nm" }, kind: { type: "string" } },
      additionalProperties: false,
      if: { properties: { kind: { const: "a" } } },
      // biome-ignore lint/suspicious/noThenProperty: a JSON Schema keyword
      then: { required: ["name"] },
    };
    const compiled = compileSchema(schema, "input");
    expect(compiled.json).toBe(schema);
    expect(compiled.validate({ kind: "a", name: "x" })).toEqual({
      ok: true,
      value: { kind: "a", name: "x" },
    });
    expect(compiled.validate({ kind: "a" })).toMatchObject({ ok: false });
    expect(compiled.validate({ extra: 1 })).toMatchObject({ ok: false });
  });

  it("should support draft-07 when the schema names it", () => {
    const compiled = compileSchema(
      { $schema: "http://json-schema.org/draft-07/schema#", type: "object", required: ["a"] },
      "input",
    );
    expect(compiled.validate({})).toMatchObject({ ok: false });
  });

  it("should refuse unsupported dialects, network $refs and oversized schemas at registration", () => {
    expect(() =>
      compileSchema({ $schema: "https://example.com/dialect", type: "object" }, "input"),
    ).toThrow(/dialect/);
    expect(() =>
      compileSchema(
        { type: "object", properties: { a: { $ref: "https://example.com/schema.json" } } },
        "input",
      ),
    ).toThrow();
    let deep: Record<string, unknown> = { type: "string" };
    for (let i = 0; i < 40; i++) deep = { allOf: [deep] };
    expect(() => compileSchema({ type: "object", properties: { a: deep } }, "input")).toThrow(
      /deeply/,
    );
  });

  it("should validate through Standard Schema and advertise its JSON Schema", async () => {
    const schema = z.object({ city: z.string(), days: z.number().int().optional() });
    const compiled = compileSchema(schema, "input");
    expect(compiled.json).toMatchObject({
      type: "object",
      properties: { city: { type: "string" } },
      required: ["city"],
    });
    expect(await compiled.validate({ city: "Oslo" })).toEqual({
      ok: true,
      value: { city: "Oslo" },
    });
    const failed = await compiled.validate({ city: 3 });
    expect(failed.ok).toBe(false);
    expect(failed.ok ? "" : failed.message).toContain("city");
  });

  it("should advertise an optional nullable field as its type with default null", () => {
    const schema = z.object({
      note: z.string().nullable().optional(),
      where: z.object({ lat: z.number() }).nullable().optional(),
    });
    const compiled = compileSchema(schema, "input");
    const properties = compiled.json.properties as Record<string, Record<string, unknown>>;
    expect(properties.note).toEqual({ type: "string", default: null });
    expect(properties.where).toMatchObject({ type: "object", default: null });
    expect(properties.where?.anyOf).toBeUndefined();
  });
});

describe("compileSchema without code generation (edge runtimes)", () => {
  it("should validate 2020-12 and draft-07 schemas by interpretation", () => {
    const schema = {
      type: "object",
      $defs: { name: { $anchor: "nm", type: "string", minLength: 1 } },
      properties: { name: { $ref: "#nm" }, n: { type: "integer" } },
      required: ["name"],
      additionalProperties: false,
    };
    const compiled = compileSchema(schema, "input", true);
    expect(compiled.validate({ name: "x", n: 2 })).toEqual({
      ok: true,
      value: { name: "x", n: 2 },
    });
    expect(compiled.validate({ name: "", n: 1.5, extra: true })).toMatchObject({ ok: false });
    const draft07 = compileSchema(
      { $schema: "http://json-schema.org/draft-07/schema#", type: "object", required: ["a"] },
      "input",
      true,
    );
    expect(draft07.validate({})).toMatchObject({ ok: false });
  });

  it("should still refuse network $refs", () => {
    expect(() =>
      compileSchema(
        { type: "object", properties: { a: { $ref: "https://example.com/s.json" } } },
        "input",
        true,
      ),
    ).toThrow(/network/);
  });
});

describe("simplifyNullable", () => {
  it("should leave other anyOf forms alone", () => {
    const schema = { anyOf: [{ type: "string" }, { type: "number" }] };
    expect(simplifyNullable(schema)).toEqual(schema);
  });
});
