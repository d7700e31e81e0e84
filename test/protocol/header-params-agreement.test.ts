import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as z from "zod";
import { McpClient } from "../../src/client/index.js";
import { createMcpHandler, McpServer } from "../../src/index.js";
import type { HeaderParam } from "../../src/protocol/header-params.js";
import type { JsonObject } from "../../src/protocol/messages.js";
import type { SchemaInput } from "../../src/server/schema.js";

const URL_ = "http://127.0.0.1/mcp";

interface Case {
  name: string;
  input: SchemaInput;
  /** Arguments of a call that fills every annotated parameter. */
  args: JsonObject;
  params: HeaderParam[];
  /** The `Mcp-Param-*` headers that call sends. */
  headers: Record<string, string>;
}

const str = (header: string) => ({ type: "string", "x-mcp-header": header });

/** Valid annotations at every place the rules allow, next to what the rules leave alone. */
const cases: Case[] = [
  {
    name: "top_level_primitives",
    input: {
      type: "object",
      properties: {
        region: str("Region"),
        count: { type: "integer", "x-mcp-header": "Count" },
        dryRun: { type: "boolean", "x-mcp-header": "Dry-Run" },
        query: { type: "string" },
      },
      required: ["region"],
    },
    args: { region: "Zürich", count: -7, dryRun: false, query: "q" },
    params: [
      { header: "Region", path: ["region"] },
      { header: "Count", path: ["count"] },
      { header: "Dry-Run", path: ["dryRun"] },
    ],
    headers: {
      "mcp-param-region": "=?base64?WsO8cmljaA==?=",
      "mcp-param-count": "-7",
      "mcp-param-dry-run": "false",
    },
  },
  {
    name: "nested_chain",
    input: {
      type: "object",
      properties: {
        scope: {
          type: "object",
          properties: {
            // A chain step needs no `type`: only `properties` keys count.
            org: { properties: { tenant: { type: "integer", "x-mcp-header": "Tenant" } } },
            zone: str("Zone"),
          },
        },
      },
    },
    args: { scope: { org: { tenant: 9_007_199_254_740_991 }, zone: "b" } },
    params: [
      { header: "Tenant", path: ["scope", "org", "tenant"] },
      { header: "Zone", path: ["scope", "zone"] },
    ],
    headers: { "mcp-param-tenant": "9007199254740991", "mcp-param-zone": "b" },
  },
  {
    name: "odd_property_names",
    input: {
      type: "object",
      properties: {
        "a/b~c": str("Slash"),
        enum: str("Enum"),
        "x-mcp-header": str("Named"),
      },
    },
    args: { "a/b~c": "s", enum: "e", "x-mcp-header": "n" },
    params: [
      { header: "Slash", path: ["a/b~c"] },
      { header: "Enum", path: ["enum"] },
      { header: "Named", path: ["x-mcp-header"] },
    ],
    headers: { "mcp-param-slash": "s", "mcp-param-enum": "e", "mcp-param-named": "n" },
  },
  {
    name: "every_tchar",
    input: { type: "object", properties: { t: str("!#$%&'*+-.^_`|~09AZaz") } },
    args: { t: "=?base64?literal?=" },
    params: [{ header: "!#$%&'*+-.^_`|~09AZaz", path: ["t"] }],
    headers: { "mcp-param-!#$%&'*+-.^_`|~09azaz": "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?=" },
  },
  {
    name: "beside_unannotated_subschemas",
    input: {
      type: "object",
      properties: {
        // Annotated beside a $ref: the property itself is on the chain.
        code: { ...str("Code"), $ref: "#/$defs/Code" },
        tags: { type: "array", items: { type: "string" } },
        // Once the client's own copy refused this: a *property* named x-mcp-header off the chain.
        rows: {
          type: "array",
          items: { type: "object", properties: { "x-mcp-header": { type: "string" } } },
        },
        either: { anyOf: [{ type: "string" }, { type: "integer" }] },
        mode: { ...str("Mode"), enum: ["fast", "slow"], default: "fast", examples: ["slow"] },
      },
      $defs: { Code: { type: "string", minLength: 1 } },
      dependentRequired: { "x-mcp-header": ["code"] },
      if: { properties: { mode: { const: "fast" } } },
      else: { required: ["code"] },
    },
    args: { code: "c1", tags: ["t"], rows: [{ "x-mcp-header": "r" }], either: 1, mode: "slow" },
    params: [
      { header: "Code", path: ["code"] },
      { header: "Mode", path: ["mode"] },
    ],
    headers: { "mcp-param-code": "c1", "mcp-param-mode": "slow" },
  },
  {
    name: "draft_07",
    input: {
      $schema: "http://json-schema.org/draft-07/schema#",
      type: "object",
      properties: { id: { $ref: "#/definitions/Id" }, region: str("Region") },
      definitions: { Id: { type: "string" } },
    },
    args: { id: "x", region: "eu" },
    params: [{ header: "Region", path: ["region"] }],
    headers: { "mcp-param-region": "eu" },
  },
  {
    name: "zod",
    input: z.object({
      region: z.string().meta({ "x-mcp-header": "Region" }),
      scope: z.object({ tenant: z.int().meta({ "x-mcp-header": "Tenant" }) }),
      dryRun: z.boolean().optional().meta({ "x-mcp-header": "DryRun" }),
    }),
    args: { region: " padded ", scope: { tenant: 7 }, dryRun: true },
    params: [
      { header: "Region", path: ["region"] },
      { header: "Tenant", path: ["scope", "tenant"] },
      { header: "DryRun", path: ["dryRun"] },
    ],
    headers: {
      "mcp-param-region": "=?base64?IHBhZGRlZCA=?=",
      "mcp-param-tenant": "7",
      "mcp-param-dryrun": "true",
    },
  },
];

describe("x-mcp-header: every tool the server accepts, its client accepts", () => {
  const server = new McpServer({ name: "headers", version: "1.0.0" });
  for (const { name, input } of cases) server.tool({ name, input }, () => `${name} ok`);
  const mcp = createMcpHandler(server);
  /** The `Mcp-Param-*` headers of each `tools/call`, by tool name. */
  const sent = new Map<string, Record<string, string>>();
  const warnings: string[] = [];
  let client: McpClient;

  beforeAll(async () => {
    client = await McpClient.connect(URL_, {
      eraCache: false,
      onWarning: (message) => warnings.push(message),
      fetch: (input, init) => {
        const request = new Request(input, init);
        if (request.headers.get("mcp-method") === "tools/call") {
          const params = [...request.headers].filter(([key]) => key.startsWith("mcp-param-"));
          sent.set(request.headers.get("mcp-name") ?? "", Object.fromEntries(params));
        }
        return mcp.fetch(request);
      },
    });
  });
  afterAll(async () => {
    await client.close();
    await mcp.close();
  });

  it("should list every registered tool over modern HTTP, with no warning", async () => {
    expect(client.era).toBe("modern");
    const listed = await client.tools();
    expect(listed.map((tool) => tool.name)).toEqual(cases.map((c) => c.name));
    expect(warnings).toEqual([]);
  });

  it.each(cases)("should mirror the same parameters on both sides: $name", async (c) => {
    expect(server.tools.get(c.name)?.headerParams).toEqual(c.params);
    const tool = (await client.tool(c.name))!;
    // The server checks each Mcp-Param-* header against the body: a call passes only when
    // the client mirrored exactly the parameters the server expects.
    expect(await tool.call(c.args)).toEqual([{ type: "text", text: `${c.name} ok` }]);
    expect(sent.get(c.name)).toEqual(c.headers);
  });
});

describe("x-mcp-header: a tool its client would drop is refused at registration", () => {
  const reused = z.string().meta({ id: "Region", "x-mcp-header": "Region" });
  // Each was registered before, with the annotation ignored, and then left out by the client.
  it.each([
    ["under items", { type: "array", items: str("A") }, "#/properties/p/items"],
    ["under anyOf", { anyOf: [str("A"), { type: "integer" }] }, "#/properties/p/anyOf/0"],
    ["under not", { type: "string", not: str("A") }, "#/properties/p/not"],
    ["behind $ref", { $ref: "#/$defs/A" }, "#/$defs/A"],
  ])("should refuse an annotation %s", (_where, p, at) => {
    const server = new McpServer({ name: "s", version: "1" });
    const input = { type: "object", properties: { p }, $defs: { A: str("A") } };
    expect(() => server.tool({ name: "bad", input }, () => "")).toThrow(
      new TypeError(
        `Tool bad: x-mcp-header "A" at ${at} is not on a property reachable through properties alone`,
      ),
    );
    expect(server.tools.has("bad")).toBe(false);
  });

  it("should refuse a zod schema whose annotated schema is hoisted into $defs", () => {
    const server = new McpServer({ name: "s", version: "1" });
    const input = z.object({ region: reused });
    expect(() => server.tool({ name: "bad", input }, () => "")).toThrow(
      /^Tool bad: x-mcp-header "Region" at #\/\$defs\/Region is not on a property/,
    );
  });
});
