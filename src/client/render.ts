import type { JsonObject } from "../protocol/messages.js";
import type { Tool } from "./tool.js";

/** A tool entry of the Anthropic Messages API `tools` array. */
export interface AnthropicTool {
  name: string;
  description?: string;
  input_schema: JsonObject;
}

/** A function tool of the OpenAI Chat Completions API. */
export interface OpenAIChatTool {
  type: "function";
  function: { name: string; description?: string; parameters: JsonObject; strict: false };
}

/** A function tool of the OpenAI Responses API. */
export interface OpenAIResponsesTool {
  type: "function";
  name: string;
  description?: string;
  parameters: JsonObject;
  strict: false;
}

function describe(tool: Tool): { description?: string } {
  const text = tool.description ?? tool.title;
  return text === undefined ? {} : { description: text };
}

/** The Anthropic Messages entry for one tool. */
export function toAnthropicTool(tool: Tool): AnthropicTool {
  return { name: tool.name, ...describe(tool), input_schema: tool.inputSchema };
}

/**
 * The Anthropic Messages `tools` array for a list of tools, leaving out those only an MCP App
 * may call (`_meta.ui.visibility` without "model": hosts keep them from the model, SEP-1865).
 *
 * @example
 * ```ts
 * import { McpClient, toAnthropicTools } from "mcp-mount/client";
 * const client = await McpClient.connect("http://localhost:3000/mcp", { prefix: "notes_" });
 * const tools = toAnthropicTools(await client.tools()); // the `tools` of a messages request
 * ```
 */
export function toAnthropicTools(tools: readonly Tool[]): AnthropicTool[] {
  return tools.filter((tool) => tool.modelVisible).map(toAnthropicTool);
}

/**
 * The OpenAI function-tool entry for one tool: Chat Completions shape by default, Responses
 * shape with `{ api: "responses" }`. `strict` is false: MCP schemas rarely meet strict mode.
 */
export function toOpenAITool(tool: Tool): OpenAIChatTool;
export function toOpenAITool(tool: Tool, options: { api: "chat" }): OpenAIChatTool;
export function toOpenAITool(tool: Tool, options: { api: "responses" }): OpenAIResponsesTool;
export function toOpenAITool(
  tool: Tool,
  options: { api?: "chat" | "responses" } = {},
): OpenAIChatTool | OpenAIResponsesTool {
  if (options.api === "responses") {
    return {
      type: "function",
      name: tool.name,
      ...describe(tool),
      parameters: tool.inputSchema,
      strict: false,
    };
  }
  return {
    type: "function",
    function: { name: tool.name, ...describe(tool), parameters: tool.inputSchema, strict: false },
  };
}

/**
 * The OpenAI function-tool entries for a list of tools: Chat Completions shape by default,
 * Responses shape with `{ api: "responses" }`. Tools only an MCP App may call are left out.
 *
 * @example
 * ```ts
 * import { McpClient, toOpenAITools } from "mcp-mount/client";
 * const client = await McpClient.connect("http://localhost:3000/mcp");
 * const tools = toOpenAITools(await client.tools(), { api: "responses" });
 * ```
 */
export function toOpenAITools(tools: readonly Tool[]): OpenAIChatTool[];
export function toOpenAITools(tools: readonly Tool[], options: { api: "chat" }): OpenAIChatTool[];
export function toOpenAITools(
  tools: readonly Tool[],
  options: { api: "responses" },
): OpenAIResponsesTool[];
export function toOpenAITools(
  tools: readonly Tool[],
  options: { api?: "chat" | "responses" } = {},
): (OpenAIChatTool | OpenAIResponsesTool)[] {
  return tools
    .filter((tool) => tool.modelVisible)
    .map((tool) =>
      options.api === "responses" ? toOpenAITool(tool, { api: "responses" }) : toOpenAITool(tool),
    );
}
