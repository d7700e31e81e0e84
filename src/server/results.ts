import type { JsonObject } from "../protocol/messages.js";
import { isObject } from "../protocol/messages.js";
import { toBase64 } from "../utils/base64.js";
import { shallowCopy } from "../utils/shallow-copy.js";
import type {
  ContentBlock,
  Era,
  PromptMessage,
  PromptReturn,
  ResourceContents,
  ResourceReturn,
  ToolResult,
} from "./types.js";

/** True when a handler's return value is already a full tool result. */
export function isToolResult(value: unknown): value is ToolResult {
  return isObject(value) && Array.isArray(value.content);
}

/** A tool result carrying only an error message the model can read. */
export function toolError(message: string): JsonObject {
  return { content: [{ type: "text", text: message }], isError: true };
}

/** Turns what a tool handler returned into a tool result. */
export function toToolResult(value: unknown, era: Era): ToolResult {
  if (isToolResult(value)) return value;
  if (value === undefined) return { content: [] };
  if (typeof value === "string") return { content: [{ type: "text", text: value }] };
  const text: ContentBlock = { type: "text", text: JSON.stringify(value) };
  // Legacy schemas allow only an object as structuredContent; modern ones any JSON value.
  if (era === "legacy" && !isObject(value)) return { content: [text] };
  return { content: [text], structuredContent: value };
}

/** Turns what a prompt handler returned into a `prompts/get` result. */
export function toPromptResult(value: PromptReturn): JsonObject {
  if (typeof value === "string") {
    const message: PromptMessage = { role: "user", content: { type: "text", text: value } };
    return { messages: [message] };
  }
  if (Array.isArray(value)) return { messages: value };
  return shallowCopy(value);
}

/** Turns what a resource handler returned into a `resources/read` result. */
export function toReadResult(value: ResourceReturn, uri: string, mimeType?: string): JsonObject {
  const base: JsonObject = mimeType ? { uri, mimeType } : { uri };
  if (typeof value === "string") return { contents: [{ ...base, text: value }] };
  if (value instanceof Uint8Array) return { contents: [{ ...base, blob: toBase64(value) }] };
  if (Array.isArray(value)) return { contents: value };
  if ("contents" in value && Array.isArray(value.contents)) return shallowCopy(value);
  return { contents: [value as ResourceContents] };
}
