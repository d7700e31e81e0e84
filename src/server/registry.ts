import { findHeaderParams, type HeaderParam, HeaderParamError } from "../protocol/header-params.js";
import type { JsonObject } from "../protocol/messages.js";
import type { CompiledSchema } from "./schema.js";
import type {
  CacheHints,
  Implementation,
  PromptHandler,
  PromptOptions,
  ResourceHandler,
  ResourceOptions,
  ResourceTemplateHandler,
  ResourceTemplateOptions,
  ToolHandler,
  ToolOptions,
} from "./types.js";
import type { UriTemplate } from "./uri-template.js";

/** A change that list-changed and resource-updated notifications report. */
export type ChangeEvent =
  | { kind: "tools" | "prompts" | "resources" }
  | { kind: "resource"; uri: string }
  /** A task's new state, for `notifications/tasks` on listen streams of its principal. */
  | { kind: "task"; taskId: string; principal: string; task: JsonObject };

/** Options of {@link McpServer}. */
export interface McpServerOptions extends Implementation {
  /** Guidance for models on how to use this server. */
  instructions?: string;
  /** Items per page of every list. @default 100 */
  pageSize?: number;
  /** Caching hints per cacheable list and for `server/discover`. @default { ttlMs: 0, cacheScope: "public" } */
  cache?: Partial<
    Record<"discover" | "tools" | "prompts" | "resources" | "resourceTemplates", CacheHints>
  >;
}

/** A registration that can be removed again (which notifies listeners). */
export interface Registration {
  remove(): void;
}

/** A registered tool, with its schemas compiled. */
export interface RegisteredTool {
  options: ToolOptions;
  handler: ToolHandler;
  input: CompiledSchema | undefined;
  output: CompiledSchema | undefined;
  /** Property paths of parameters mirrored into `Mcp-Param-*` headers. */
  headerParams: HeaderParam[];
  definition: JsonObject;
}

/** A registered prompt. */
export interface RegisteredPrompt {
  options: PromptOptions;
  handler: PromptHandler;
  definition: JsonObject;
}

/** A registered resource. */
export interface RegisteredResource {
  options: ResourceOptions;
  handler: ResourceHandler;
  definition: JsonObject;
}

/** A registered resource template. */
export interface RegisteredTemplate {
  options: ResourceTemplateOptions;
  handler: ResourceTemplateHandler;
  template: UriTemplate;
  definition: JsonObject;
}

/** The definition a list shows of a registration: its options, less handlers and `omit`. */
export function definitionOf(options: object, omit: string[]): JsonObject {
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(options)) {
    if (value !== undefined && typeof value !== "function" && !omit.includes(key)) out[key] = value;
  }
  return out;
}

/** The tool's header params; its name prefixes the broken rule when there is one. */
export function headerParamsOf(inputSchema: JsonObject, tool: string): HeaderParam[] {
  try {
    return findHeaderParams(inputSchema);
  } catch (error) {
    if (error instanceof HeaderParamError) {
      throw new TypeError(`Tool ${tool}: ${error.message}`, { cause: error });
    }
    throw error;
  }
}

/** Caching hints for a list, with the defaults applied. */
export function cacheHints(hints: CacheHints | undefined): Required<CacheHints> {
  return { ttlMs: hints?.ttlMs ?? 0, cacheScope: hints?.cacheScope ?? "public" };
}
