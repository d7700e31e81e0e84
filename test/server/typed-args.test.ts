// The type assertions here are checked by `tsc -p tsconfig.json` (npm run typecheck), not by
// vitest, which runs without typecheck mode; the runtime part calls the same tools over fetch.
import * as v from "valibot";
import { describe, expect, expectTypeOf, it } from "vitest";
import * as z from "zod";
import { createMcpHandler, type InferJsonSchema, McpServer } from "../../src/index.js";
import type { JsonObject } from "../../src/protocol/messages.js";
import { call, viaFetch } from "../helpers/modern.js";

const weather = () => new McpServer({ name: "weather", version: "1.0.0" });

describe("InferJsonSchema", () => {
  it("should type scalars, enum and const as literal unions", () => {
    expectTypeOf<InferJsonSchema<{ type: "string" }>>().toEqualTypeOf<string>();
    expectTypeOf<InferJsonSchema<{ type: "integer" }>>().toEqualTypeOf<number>();
    expectTypeOf<InferJsonSchema<{ type: "number" }>>().toEqualTypeOf<number>();
    expectTypeOf<InferJsonSchema<{ type: "boolean" }>>().toEqualTypeOf<boolean>();
    expectTypeOf<InferJsonSchema<{ type: "null" }>>().toEqualTypeOf<null>();
    expectTypeOf<InferJsonSchema<{ enum: readonly ["c", "f"] }>>().toEqualTypeOf<"c" | "f">();
    expectTypeOf<InferJsonSchema<{ type: "string"; const: "on" }>>().toEqualTypeOf<"on">();
    expectTypeOf<InferJsonSchema<{ type: readonly ["string", "null"] }>>().toEqualTypeOf<
      string | null
    >();
  });

  it("should type arrays, nested objects, unions and additionalProperties", () => {
    const schema = {
      type: "object",
      properties: {
        tags: { type: "array", items: { type: "string" } },
        anything: { type: "array" },
        at: {
          type: "object",
          properties: { lat: { type: "number" }, lon: { type: "number" } },
          required: ["lat", "lon"],
          additionalProperties: false,
        },
        id: { anyOf: [{ type: "string" }, { type: "integer" }] },
        shape: {
          oneOf: [
            { type: "object", properties: { r: { type: "number" } }, required: ["r"] },
            { type: "null" },
          ],
        },
        counts: { type: "object", additionalProperties: { type: "integer" } },
      },
      required: ["tags", "at"],
      additionalProperties: false,
    } as const;
    expectTypeOf<InferJsonSchema<typeof schema>>().toEqualTypeOf<{
      tags: string[];
      anything?: unknown[];
      at: { lat: number; lon: number };
      id?: string | number;
      shape?: { [key: string]: unknown; r: number } | null;
      counts?: { [key: string]: number };
    }>();
  });

  it("should fall back to unknown for keywords it does not understand", () => {
    expectTypeOf<InferJsonSchema<{ $ref: "#/$defs/city" }>>().toBeUnknown();
    expectTypeOf<InferJsonSchema<{ allOf: readonly [{ type: "string" }] }>>().toBeUnknown();
    expectTypeOf<InferJsonSchema<{ type: "string" | "number" }>>().toEqualTypeOf<string | number>();
    // A schema not written as a literal carries no information.
    expectTypeOf<InferJsonSchema<{ type: string }>>().toBeUnknown();
    // anyOf branches that only add `required` leave the type to `type`.
    expectTypeOf<
      InferJsonSchema<{
        type: "object";
        properties: { a: { type: "string" } };
        additionalProperties: false;
        anyOf: readonly [{ required: readonly ["a"] }];
      }>
    >().toEqualTypeOf<{ a?: string }>();
  });

  it("should stop at a bounded depth instead of exhausting the compiler", () => {
    type Nest<S, N extends unknown[] = []> = N["length"] extends 30
      ? S
      : Nest<{ type: "object"; properties: { next: S }; required: ["next"] }, [...N, 0]>;
    type Deep = InferJsonSchema<Nest<{ type: "string" }>>;
    type Next<T> = T extends { next: infer N } ? N : never;
    expectTypeOf<Next<Next<Next<Next<Next<Next<Next<Next<Next<Deep>>>>>>>>>>().toHaveProperty(
      "next",
    );
    expectTypeOf<Next<Next<Next<Next<Next<Next<Next<Next<Next<Next<Deep>>>>>>>>>>>().toBeUnknown();
  });
});

describe("McpServer.tool with an inline JSON Schema", () => {
  const server = weather();
  server.tool(
    {
      name: "forecast",
      input: {
        type: "object",
        properties: {
          city: { type: "string" },
          days: { type: "integer" },
          unit: { enum: ["c", "f"] },
          note: { type: ["string", "null"] },
        },
        required: ["city", "unit"],
      },
    },
    ({ city, days, unit, note }) => {
      expectTypeOf(city).toEqualTypeOf<string>();
      expectTypeOf(days).toEqualTypeOf<number | undefined>();
      expectTypeOf(unit).toEqualTypeOf<"c" | "f">();
      expectTypeOf(note).toEqualTypeOf<string | null | undefined>();
      return `${city.toUpperCase()} ${days ?? 1}d ${unit} ${note ?? "-"}`;
    },
  );
  server.tool(
    {
      name: "route",
      input: {
        type: "object",
        properties: {
          stops: {
            type: "array",
            items: {
              type: "object",
              properties: { name: { type: "string" }, lat: { type: "number" } },
              required: ["name"],
              additionalProperties: false,
            },
          },
        },
        required: ["stops"],
        additionalProperties: false,
      },
    },
    (args) => {
      expectTypeOf(args).toEqualTypeOf<{ stops: { name: string; lat?: number }[] }>();
      return args.stops.map((stop) => stop.name).join(" > ");
    },
  );
  server.tool(
    { name: "untyped", input: { $ref: "#/$defs/nothing", $defs: { nothing: {} } } },
    (args) => {
      expectTypeOf(args).toEqualTypeOf<JsonObject>();
      return Object.keys(args).join(",");
    },
  );
  server.tool(
    {
      name: "explicit",
      input: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
    },
    // Annotating the handler picks the generic signature, as before.
    (args: { city: string }) => args.city,
  );
  server.tool<{ city: string }>(
    {
      name: "generic",
      input: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
    },
    (args) => {
      expectTypeOf(args).toEqualTypeOf<{ city: string }>();
      return args.city;
    },
  );
  server.tool(
    { name: "zod", input: z.object({ city: z.string(), days: z.number().optional() }) },
    (args) => {
      expectTypeOf(args).toEqualTypeOf<{ city: string; days?: number | undefined }>();
      return args.city;
    },
  );
  server.tool({ name: "none" }, (args) => {
    expectTypeOf(args).toEqualTypeOf<JsonObject>();
    return "none";
  });
  const send = viaFetch(createMcpHandler(server).fetch);
  const text = async (name: string, args: Record<string, unknown>) => {
    const { result, error } = await call(send, "tools/call", { name, arguments: args });
    expect(error).toBeUndefined();
    return (result.content as { text: string }[])[0]?.text;
  };

  it("should hand the handler the arguments its schema types", async () => {
    expect(await text("forecast", { city: "oslo", unit: "c" })).toBe("OSLO 1d c -");
    expect(await text("forecast", { city: "rome", unit: "f", days: 3, note: null })).toBe(
      "ROME 3d f -",
    );
    expect(await text("route", { stops: [{ name: "a" }, { name: "b", lat: 1 }] })).toBe("a > b");
    expect(await text("untyped", { x: 1 })).toBe("x");
  });

  it("should keep the explicit generic, annotated handlers and Standard Schema working", async () => {
    for (const name of ["explicit", "generic", "zod"]) {
      expect(await text(name, { city: "oslo" })).toBe("oslo");
    }
    expect(await text("none", {})).toBe("none");
  });

  it("should infer a valibot output type, though valibot alone cannot advertise its schema", () => {
    const register = (s: McpServer) =>
      s.tool({ name: "valibot", input: v.object({ city: v.string() }) }, (args) => {
        expectTypeOf(args).toEqualTypeOf<{ city: string }>();
        return args.city;
      });
    expect(() => register(weather())).toThrow(/Standard JSON Schema/);
  });

  it("should still validate arguments at runtime before the typed handler runs", async () => {
    const { result } = await call(send, "tools/call", {
      name: "forecast",
      arguments: { city: "oslo", unit: "kelvin" },
    });
    expect(result.isError).toBe(true);
  });

  it("should reject handlers that misuse the inferred arguments", () => {
    const s = weather();
    const input = {
      type: "object",
      properties: {
        city: { type: "string" },
        days: { type: "integer" },
        unit: { enum: ["c", "f"] },
        at: { type: "object", properties: { lat: { type: "number" } }, required: ["lat"] },
        note: { type: ["string", "null"] },
      },
      required: ["city", "unit", "at", "note"],
      additionalProperties: false,
    } as const;
    // @ts-expect-error city is a string
    s.tool({ name: "a", input }, ({ city }) => city.toFixed());
    // @ts-expect-error days is optional
    s.tool({ name: "b", input }, ({ days }) => days.toFixed());
    // @ts-expect-error "kelvin" is not in the enum
    s.tool({ name: "c", input }, ({ unit }) => unit === "kelvin");
    // @ts-expect-error additionalProperties: false leaves no other keys
    s.tool({ name: "d", input }, ({ town }) => town);
    // @ts-expect-error lat is a number
    s.tool({ name: "e", input }, ({ at }) => at.lat.toUpperCase());
    // @ts-expect-error note may be null
    s.tool({ name: "f", input }, ({ note }) => note.length);
    s.tool<{ city: string }>(
      { name: "g", input },
      // @ts-expect-error the explicit generic still types the handler
      ({ town }) => town,
    );
    // @ts-expect-error zod's output type still types the handler
    s.tool({ name: "h", input: z.object({ city: z.string() }) }, ({ city }) => city.toFixed());
    expect(s.tools.size).toBe(8);
  });
});

describe("McpServer.prompt with an argument list", () => {
  const server = weather();
  server.prompt(
    {
      name: "greet",
      arguments: [
        { name: "who", required: true, complete: (value) => [`${value}a`] },
        { name: "style" },
      ],
    },
    (args) => {
      expectTypeOf(args).toEqualTypeOf<{ who: string; style?: string }>();
      return `Hello ${args.who.toUpperCase()}${args.style ? ` (${args.style})` : ""}`;
    },
  );
  server.prompt({ name: "plain" }, (args) => {
    expectTypeOf(args).toEqualTypeOf<Record<string, string>>();
    return "plain";
  });
  const send = viaFetch(createMcpHandler(server).fetch);

  it("should type required arguments as strings and the others as optional", async () => {
    const { result } = await call(send, "prompts/get", {
      name: "greet",
      arguments: { who: "ada", style: "warm" },
    });
    expect(result.messages).toEqual([
      { role: "user", content: { type: "text", text: "Hello ADA (warm)" } },
    ]);
  });

  it("should reject handlers that misuse the declared arguments", () => {
    const s = weather();
    const args = [{ name: "who", required: true }, { name: "style" }] as const;
    // @ts-expect-error style is optional
    s.prompt({ name: "a", arguments: args }, ({ style }) => style.toUpperCase());
    // @ts-expect-error whom is not declared
    s.prompt({ name: "b", arguments: args }, ({ whom }) => whom);
    expect(s.prompts.size).toBe(2);
  });
});
