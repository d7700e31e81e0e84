import { describe, expect, it } from "vitest";
import {
  encodeHeaderValue,
  findHeaderParams,
  headerParamValues,
} from "../../src/client/header-params.js";

describe("x-mcp-header on the client", () => {
  it("should encode values as the spec's examples do", () => {
    expect(encodeHeaderValue("us-west1")).toBe("us-west1");
    expect(encodeHeaderValue("Hello, 世界")).toBe("=?base64?SGVsbG8sIOS4lueVjA==?=");
    expect(encodeHeaderValue(" padded ")).toBe("=?base64?IHBhZGRlZCA=?=");
    expect(encodeHeaderValue("line1\nline2")).toBe("=?base64?bGluZTEKbGluZTI=?=");
    expect(encodeHeaderValue("=?base64?literal?=")).toBe("=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?=");
  });

  it("should find annotations on properties chains and extract their values", () => {
    const params = findHeaderParams({
      type: "object",
      properties: {
        region: { type: "string", "x-mcp-header": "Region" },
        scope: {
          type: "object",
          properties: { tenant: { type: "integer", "x-mcp-header": "Tenant" } },
        },
        dryRun: { type: "boolean", "x-mcp-header": "Dry-Run" },
        note: { type: "string", enum: [{ "x-mcp-header": "data, not an annotation" }] },
      },
    });
    expect(params).toEqual([
      { header: "Region", path: ["region"] },
      { header: "Tenant", path: ["scope", "tenant"] },
      { header: "Dry-Run", path: ["dryRun"] },
    ]);
    expect(
      headerParamValues(params, { region: "eu", scope: { tenant: 7 }, dryRun: false }),
    ).toEqual({ "mcp-param-Region": "eu", "mcp-param-Tenant": "7", "mcp-param-Dry-Run": "false" });
    expect(headerParamValues(params, { region: null })).toEqual({});
  });

  it.each([
    ["an empty name", { a: { type: "string", "x-mcp-header": "" } }, /not a header token/],
    ["a name with a space", { a: { type: "string", "x-mcp-header": "A B" } }, /not a header token/],
    [
      "a number parameter",
      { a: { type: "number", "x-mcp-header": "A" } },
      /string, integer or boolean/,
    ],
    [
      "a duplicate ignoring case",
      { a: { type: "string", "x-mcp-header": "A" }, b: { type: "string", "x-mcp-header": "a" } },
      /declared twice/,
    ],
    [
      "a parameter under items",
      { a: { type: "array", items: { type: "string", "x-mcp-header": "A" } } },
      /reachable/,
    ],
    [
      "a parameter under anyOf",
      { a: { anyOf: [{ type: "string", "x-mcp-header": "A" }] } },
      /reachable/,
    ],
  ])("should reject %s", (_name, properties, reason) => {
    expect(() => findHeaderParams({ type: "object", properties })).toThrow(reason);
  });
});
