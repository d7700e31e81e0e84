import { describe, expect, it } from "vitest";
import {
  findHeaderParams,
  type HeaderParam,
  HeaderParamError,
  type HeaderParamProblem,
} from "../../src/protocol/header-params.js";
import type { JsonObject } from "../../src/protocol/messages.js";

const object = (properties: JsonObject, more: JsonObject = {}): JsonObject => ({
  type: "object",
  properties,
  ...more,
});
const str = (header: unknown): JsonObject => ({ type: "string", "x-mcp-header": header });

/** The problem `findHeaderParams` reports, or undefined when it accepts the schema. */
function problemOf(schema: JsonObject): HeaderParamProblem | undefined {
  try {
    findHeaderParams(schema);
    return undefined;
  } catch (error) {
    if (error instanceof HeaderParamError) return error.problem;
    throw error;
  }
}

/** A table row titled with what the former copies did differently, when they did. */
function titled<T>([name, schema, expected, before]: [string, JsonObject, T, string?]) {
  return [before ? `${name} (${before} it before)` : name, schema, expected] as const;
}

describe("x-mcp-header rules (spec 2026-07-28, streamable-http, custom headers)", () => {
  // The last column records where the two former copies disagreed with these rules: the server
  // walked `properties` alone and ignored annotations elsewhere; the client refused any
  // `x-mcp-header` key off the chain, even a property's name.
  const valid: [string, JsonObject, HeaderParam[], string?][] = [
    ["no annotation", object({ q: { type: "string" } }), []],
    [
      "the spec's example",
      object({ region: str("Region"), query: { type: "string" } }, { required: ["region"] }),
      [{ header: "Region", path: ["region"] }],
    ],
    [
      "string, integer and boolean parameters, in document order",
      object({
        a: str("A"),
        n: { type: "integer", "x-mcp-header": "N" },
        b: { type: "boolean", "x-mcp-header": "B" },
      }),
      [
        { header: "A", path: ["a"] },
        { header: "N", path: ["n"] },
        { header: "B", path: ["b"] },
      ],
    ],
    [
      "a nested object property, every step a properties key",
      object({ scope: object({ tenant: { type: "integer", "x-mcp-header": "Tenant" } }) }),
      [{ header: "Tenant", path: ["scope", "tenant"] }],
    ],
    [
      "a chain step without a type",
      object({ scope: { properties: { id: str("Id") } } }),
      [{ header: "Id", path: ["scope", "id"] }],
    ],
    [
      "every tchar",
      object({ a: str("!#$%&'*+-.^_`|~09AZaz") }),
      [{ header: "!#$%&'*+-.^_`|~09AZaz", path: ["a"] }],
    ],
    [
      "names that look like keywords and hold / or ~",
      object({ "a/b": str("Slash"), enum: str("Enum"), "x-mcp-header": str("Named") }),
      [
        { header: "Slash", path: ["a/b"] },
        { header: "Enum", path: ["enum"] },
        { header: "Named", path: ["x-mcp-header"] },
      ],
    ],
    [
      "an annotated property that also carries $ref and other keywords",
      object(
        { r: { ...str("R"), $ref: "#/$defs/Code", minLength: 1, description: "region" } },
        { $defs: { Code: { type: "string" } } },
      ),
      [{ header: "R", path: ["r"] }],
    ],
    [
      "x-mcp-header keys inside instance data (const, enum, default, examples)",
      object({
        a: {
          type: "object",
          const: { "x-mcp-header": "C" },
          enum: [{ "x-mcp-header": "E" }],
          default: { "x-mcp-header": "D" },
          examples: [{ "x-mcp-header": "X" }],
        },
      }),
      [],
    ],
    [
      "a property named x-mcp-header off the chain (under items, $defs, dependentRequired)",
      object(
        { list: { type: "array", items: object({ "x-mcp-header": { type: "string" } }) } },
        {
          $defs: { "x-mcp-header": { type: "string" } },
          dependentRequired: { "x-mcp-header": ["list"] },
        },
      ),
      [],
      "client refused",
    ],
    ["an undefined annotation, which JSON cannot carry", object({ a: str(undefined) }), []],
  ];

  it.each(valid.map(titled))("should accept %s", (_name, schema, params) => {
    expect(findHeaderParams(schema)).toEqual(params);
  });

  const invalid: [string, JsonObject, HeaderParamProblem, string?][] = [
    [
      "a parameter under items",
      object({ a: { type: "array", items: str("A") } }),
      { rule: "placement", header: "A", at: "/properties/a/items" },
      "server accepted",
    ],
    [
      "a parameter under prefixItems",
      object({ a: { type: "array", prefixItems: [{ type: "integer" }, str("A")] } }),
      { rule: "placement", header: "A", at: "/properties/a/prefixItems/1" },
      "server accepted",
    ],
    [
      "a property of an array's items",
      object({ a: { type: "array", items: object({ id: str("Id") }) } }),
      { rule: "placement", header: "Id", at: "/properties/a/items/properties/id" },
      "server accepted",
    ],
    ...(["anyOf", "oneOf", "allOf"] as const).map(
      (keyword): [string, JsonObject, HeaderParamProblem, string] => [
        `a parameter under ${keyword}`,
        object({ a: { [keyword]: [{ type: "integer" }, str("A")] } }),
        { rule: "placement", header: "A", at: `/properties/a/${keyword}/1` },
        "server accepted",
      ],
    ),
    [
      "a property under a root composition",
      { type: "object", allOf: [object({ a: str("A") })] },
      { rule: "placement", header: "A", at: "/allOf/0/properties/a" },
      "server accepted",
    ],
    [
      "a parameter under not",
      object({ a: { type: "string", not: str("A") } }),
      { rule: "placement", header: "A", at: "/properties/a/not" },
      "server accepted",
    ],
    ...(["if", "then", "else"] as const).map(
      (keyword): [string, JsonObject, HeaderParamProblem, string] => [
        `a property under ${keyword}`,
        { type: "object", [keyword]: object({ a: str("A") }) },
        { rule: "placement", header: "A", at: `/${keyword}/properties/a` },
        "server accepted",
      ],
    ),
    [
      "a $defs entry reached through $ref",
      object({ a: { $ref: "#/$defs/A" } }, { $defs: { A: str("A") } }),
      { rule: "placement", header: "A", at: "/$defs/A" },
      "server accepted",
    ],
    [
      "a draft-07 definitions entry",
      object({ a: { $ref: "#/definitions/A" } }, { definitions: { A: str("A") } }),
      { rule: "placement", header: "A", at: "/definitions/A" },
      "server accepted",
    ],
    [
      "additionalProperties",
      { type: "object", additionalProperties: str("A") },
      { rule: "placement", header: "A", at: "/additionalProperties" },
      "server accepted",
    ],
    [
      "patternProperties",
      { type: "object", patternProperties: { "^a": str("A") } },
      { rule: "placement", header: "A", at: "/patternProperties/^a" },
      "server accepted",
    ],
    [
      "dependentSchemas",
      { type: "object", dependentSchemas: { a: object({ b: str("B") }) } },
      { rule: "placement", header: "B", at: "/dependentSchemas/a/properties/b" },
      "server accepted",
    ],
    [
      "the schema root, which is no property",
      { type: "object", "x-mcp-header": "Root" },
      { rule: "placement", header: "Root", at: "" },
    ],
    [
      "a misplaced annotation even when its name is bad too",
      object({ a: { type: "array", items: str("A B") } }),
      { rule: "placement", header: "A B", at: "/properties/a/items" },
      "server accepted",
    ],
    ["an empty name", object({ a: str("") }), { rule: "token", header: "", at: "/properties/a" }],
    [
      "a name with a space",
      object({ a: str("A B") }),
      { rule: "token", header: "A B", at: "/properties/a" },
    ],
    [
      "a name with a colon",
      object({ a: str("A:B") }),
      { rule: "token", header: "A:B", at: "/properties/a" },
    ],
    [
      "a name with CR LF",
      object({ a: str("A\r\nX-Injected") }),
      { rule: "token", header: "A\r\nX-Injected", at: "/properties/a" },
    ],
    [
      "a name outside ASCII",
      object({ a: str("Région") }),
      { rule: "token", header: "Région", at: "/properties/a" },
    ],
    ["a number as name", object({ a: str(7) }), { rule: "token", header: 7, at: "/properties/a" }],
    [
      "null as name",
      object({ a: str(null) }),
      { rule: "token", header: null, at: "/properties/a" },
    ],
    [
      "a number parameter",
      object({ a: { type: "number", "x-mcp-header": "A" } }),
      { rule: "type", header: "A", at: "/properties/a" },
    ],
    [
      "an object parameter",
      object({ a: { type: "object", "x-mcp-header": "A" } }),
      { rule: "type", header: "A", at: "/properties/a" },
    ],
    [
      "a parameter without a type",
      object({ a: { enum: ["x", "y"], "x-mcp-header": "A" } }),
      { rule: "type", header: "A", at: "/properties/a" },
    ],
    [
      "a parameter with a type list",
      object({ a: { type: ["string", "null"], "x-mcp-header": "A" } }),
      { rule: "type", header: "A", at: "/properties/a" },
    ],
    [
      "a duplicate ignoring case",
      object({ a: str("Tenant"), b: str("TENANT") }),
      {
        rule: "unique",
        header: "TENANT",
        at: "/properties/b",
        first: { header: "Tenant", path: ["a"] },
      },
    ],
    [
      "a duplicate on another branch of the chain",
      object({ a: object({ id: str("Id") }), b: str("id") }),
      {
        rule: "unique",
        header: "id",
        at: "/properties/b",
        first: { header: "Id", path: ["a", "id"] },
      },
    ],
  ];

  it.each(invalid.map(titled))("should refuse %s", (_name, schema, problem) => {
    expect(problemOf(schema)).toEqual(problem);
  });

  it("should name the rule and the place in its message, and be a TypeError", () => {
    const thrown = (() => {
      try {
        findHeaderParams(object({ a: { type: "array", items: str("A") } }));
      } catch (error) {
        return error;
      }
    })();
    expect(thrown).toBeInstanceOf(TypeError);
    expect(thrown).toMatchObject({
      name: "HeaderParamError",
      message:
        'x-mcp-header "A" at #/properties/a/items is not on a property reachable through properties alone',
    });
    expect(() => findHeaderParams(object({ a: str("a"), b: str("A") }))).toThrow(
      'x-mcp-header "A" at #/properties/b is declared twice, ignoring case (first as "a" at ["a"])',
    );
  });

  it("should walk a schema nested deeper than the call stack", () => {
    let deep: JsonObject = str("Deep");
    for (let i = 0; i < 50_000; i++) deep = { not: deep };
    expect(problemOf(object({ a: deep }))).toMatchObject({ rule: "placement", header: "Deep" });
    expect(findHeaderParams(object({ a: { not: { not: { type: "string" } } } }))).toEqual([]);
  });
});
