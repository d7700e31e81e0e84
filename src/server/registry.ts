import { findHeaderParams, type HeaderParam, HeaderParamError } from "../protocol/header-params.js";
import type { JsonObject } from "../protocol/messages.js";
import {
  type CompiledSchema,
  compileSchema,
  isStandardSchema,
  type SchemaInput,
} from "./schema.js";
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
  /** A list changed (`events`: the event types, Events extension). */
  | { kind: "tools" | "prompts" | "resources" | "events" }
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

/** The capabilities a server advertises, derived from its prompts and templates. */
export function capabilitiesOf(
  prompts: Iterable<RegisteredPrompt>,
  templates: Iterable<RegisteredTemplate>,
): JsonObject {
  const capabilities: JsonObject = {
    tools: { listChanged: true },
    prompts: { listChanged: true },
    resources: { subscribe: true, listChanged: true },
    logging: {},
  };
  const completes =
    [...prompts].some((p) => p.options.arguments?.some((a) => a.complete)) ||
    [...templates].some((t) => t.options.complete);
  if (completes) capabilities.completions = {};
  return capabilities;
}

const TOOL_NAME = /^[A-Za-z0-9_.-]{1,128}$/;

/** A tool's registry entry: its schemas compiled (a bad one throws) and its definition. */
export function toolEntry(options: ToolOptions, handler: ToolHandler): RegisteredTool {
  if (!TOOL_NAME.test(options.name)) throw new TypeError(`Invalid tool name: ${options.name}`);
  const checks = options.validate !== false;
  const input = options.input && checks ? compileSchema(options.input, "input") : undefined;
  const output = options.output && checks ? compileSchema(options.output, "output") : undefined;
  const inputSchema = input?.json ?? advertised(options.input, "input") ?? { type: "object" };
  const outputSchema = output?.json ?? advertised(options.output, "output");
  const definition = definitionOf(options, ["input", "output", "scopes", "validate"]);
  definition.inputSchema = inputSchema;
  if (outputSchema) definition.outputSchema = outputSchema;
  const headerParams = headerParamsOf(inputSchema, options.name);
  return { options, handler, input, output, headerParams, definition };
}

/** The JSON Schema a tool advertises for a schema it does not check (`validate: false`). */
function advertised(
  schema: SchemaInput | undefined,
  role: "input" | "output",
): JsonObject | undefined {
  if (schema === undefined) return undefined;
  // A plain JSON Schema goes out as given; a Standard Schema has to be converted to one.
  return isStandardSchema(schema) ? compileSchema(schema, role).json : schema;
}
