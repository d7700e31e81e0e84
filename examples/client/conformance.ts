// The client the official conformance suite drives in `client` mode: it runs this command with
// the scenario's server URL appended, the scenario in MCP_CONFORMANCE_SCENARIO and, when a
// version is asked for, MCP_CONFORMANCE_PROTOCOL_VERSION. One generic behaviour serves every
// non-auth scenario: connect, list the tools, call each with arguments built from its schema,
// answer input requests, close. test/client/conformance.test.ts records what passes.
import { McpClient, type Tool } from "mcp-mount/client";

type JsonSchema = Record<string, unknown>;

const url = process.argv[2];
if (!url) throw new Error("usage: conformance.ts <server-url>");
const version = process.env.MCP_CONFORMANCE_PROTOCOL_VERSION;

/** A value that satisfies a property schema well enough for the suite's tools. */
function sample(schema: JsonSchema): unknown {
  if (schema.default !== undefined) return schema.default;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  switch (schema.type) {
    case "integer":
    case "number":
      return 1;
    case "boolean":
      return true;
    case "array":
      return [];
    case "object":
      return argumentsFor(schema);
    default:
      return "test";
  }
}

/** Arguments with every required property filled in. */
function argumentsFor(schema: JsonSchema): Record<string, unknown> {
  const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
  const required = Array.isArray(schema.required) ? (schema.required as string[]) : [];
  const args: Record<string, unknown> = {};
  for (const name of required) args[name] = sample(properties[name] ?? {});
  return args;
}

const client = await McpClient.connect(url, {
  clientInfo: { name: "mcp-mount-conformance-client", version: "0.1.0" },
  // Derive the lifecycle from the version asked for; detect it when none is.
  era: version === undefined ? "auto" : version >= "2026-07-28" ? "modern" : "legacy",
  eraCache: false,
  onInput: {
    elicitation: () => ({ action: "accept", content: {} }),
    sampling: () => ({
      role: "assistant",
      content: { type: "text", text: "conformance" },
      model: "conformance-model",
      stopReason: "endTurn",
    }),
    roots: () => [{ uri: "file:///conformance", name: "conformance" }],
  },
  onWarning: (message) => console.error(`warning: ${message}`),
});
/** Scenario data the suite hands over, such as the exact tool calls to make. */
const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT ?? "{}") as {
  toolCalls?: { name: string; arguments: Record<string, unknown> }[];
};

try {
  const tools: Tool[] = await client.tools();
  if (context.toolCalls) {
    // Exact arguments, nulls included: callTool sends them unchecked, headers mirrored.
    for (const call of context.toolCalls) {
      const result = await client.callTool(call.name, call.arguments);
      console.log(`${call.name}: ${JSON.stringify(result.content).slice(0, 300)}`);
    }
  } else if (process.env.MCP_CONFORMANCE_SCENARIO === "json-schema-2020-12-preservation") {
    // Round-trips the focal tool's schema through the echo tool, as the scenario asks.
    const focal = tools.find((tool) => tool.name !== "json_schema_echo");
    await client.callTool("json_schema_echo", { schema: focal?.inputSchema ?? {} });
  } else
    for (const tool of tools) {
      const result = await tool.call(argumentsFor(tool.inputSchema)).catch((error: unknown) => ({
        thrown: String(error),
      }));
      console.log(`${tool.name}: ${JSON.stringify(result).slice(0, 300)}`);
    }
} finally {
  await client.close();
}
