import { type AppToolLink, appLinkOf, isModelVisible } from "../protocol/apps.js";
import {
  type CompiledSchema,
  compileInterpretedSchema,
} from "../protocol/json-schema-interpreted.js";
import { isObject, type JsonObject } from "../protocol/messages.js";
import { ToolApprovalDeniedError } from "./errors.js";
import type {
  CallToolResult,
  ContentBlock,
  RequestOptions,
  ToolAnnotations,
  ToolDefinition,
} from "./types.js";

/** How a client's tools are named, approved and presented to a model. */
export interface ToolPolicy {
  /** Prepended to each tool's name, so tools of several servers do not clash. */
  prefix?: string;
  /** Tools that pause for approval: names (with or without the prefix) or a predicate. */
  requireApproval?: readonly string[] | ((tool: Tool) => boolean);
  /** Decides whether a tool that requires approval may run with these arguments. */
  onApproval?: (tool: Tool, args: JsonObject) => boolean | Promise<boolean>;
  /** Turns a tool result into what `call` returns. @default content, or `{ error }` */
  wrap?: (result: CallToolResult, tool: Tool) => unknown;
}

/** What `Tool.call` returns by default for a result the tool flagged `isError`. */
export interface ToolError {
  error: string;
}

/** Sends `tools/call` for a tool: the client's call, which answers input and mirrors headers. */
export type ToolCaller = (
  tool: Tool,
  args: JsonObject,
  options: RequestOptions,
) => Promise<CallToolResult>;

/** The text of a result's content, for a model or an error message. */
export function contentText(content: readonly ContentBlock[]): string {
  return content
    .map((block) => (block.type === "text" ? String(block.text) : JSON.stringify(block)))
    .join("\n");
}

/**
 * A server's tool, ready for a model: its definition, predicates read from its annotations
 * with the spec's defaults, and `call`, which checks approval and arguments, mirrors
 * `x-mcp-header` parameters and checks structured output.
 *
 * @example
 * ```ts
 * import { McpClient } from "mcp-mount/client";
 * const client = await McpClient.connect("http://localhost:3000/mcp", {
 *   requireApproval: (tool) => tool.destructive,
 *   onApproval: (tool) => confirm(`Run ${tool.name}?`),
 * });
 * const tool = await client.tool("forecast");
 * const output = await tool?.call({ city: "Paris" }); // content, or { error } for the model
 * ```
 */
export class Tool {
  /** The name a model calls: the server's name with the client's prefix. */
  readonly name: string;
  /** The tool's name on the server. */
  readonly serverName: string;
  readonly title: string | undefined;
  readonly description: string | undefined;
  readonly inputSchema: JsonObject;
  readonly outputSchema: JsonObject | undefined;
  readonly annotations: ToolAnnotations;
  /** The definition as listed. */
  readonly definition: ToolDefinition;
  /** `readOnlyHint` is true. */
  readonly readOnly: boolean;
  /** Not read-only and `destructiveHint` is not false (the spec's default is destructive). */
  readonly destructive: boolean;
  /** `idempotentHint` is true. */
  readonly idempotent: boolean;
  /** `openWorldHint` is not false. */
  readonly openWorld: boolean;
  /** The client's policy asks for approval before each call. */
  readonly requiresApproval: boolean;
  /** Its MCP App (`_meta.ui`): the `ui://` view a host renders for it, and who may call it. */
  readonly ui: AppToolLink | undefined;
  /** A model may see and call it: its app visibility (default both) includes "model". */
  readonly modelVisible: boolean;
  readonly #policy: ToolPolicy;
  readonly #caller: ToolCaller;
  readonly #warn: (message: string) => void;
  #compiled: { input?: CompiledSchema | null; output?: CompiledSchema | null } = {};

  constructor(
    definition: ToolDefinition,
    policy: ToolPolicy,
    caller: ToolCaller,
    warn: (message: string) => void,
  ) {
    const annotations = isObject(definition.annotations) ? definition.annotations : {};
    this.definition = definition;
    this.serverName = definition.name;
    this.name = `${policy.prefix ?? ""}${definition.name}`;
    this.title = definition.title ?? annotations.title;
    this.description = definition.description;
    // Some servers list tools without one; model APIs need an object schema all the same.
    this.inputSchema = isObject(definition.inputSchema)
      ? definition.inputSchema
      : { type: "object", properties: {} };
    this.outputSchema = definition.outputSchema;
    this.annotations = annotations;
    this.readOnly = annotations.readOnlyHint === true;
    this.destructive = !this.readOnly && annotations.destructiveHint !== false;
    this.idempotent = annotations.idempotentHint === true;
    this.openWorld = annotations.openWorldHint !== false;
    this.ui = appLinkOf(definition._meta);
    this.modelVisible = isModelVisible(isObject(definition._meta) ? definition._meta : undefined);
    this.#policy = policy;
    this.#caller = caller;
    this.#warn = warn;
    const rule = policy.requireApproval;
    this.requiresApproval =
      typeof rule === "function"
        ? rule(this)
        : (rule ?? []).some((name) => name === this.name || name === this.serverName);
  }

  /**
   * Calls the tool and returns what a model should see: the result's content, `{ error }` when
   * the tool failed (`isError`) or the arguments or structured output break their schemas,
   * or what the policy's `wrap` makes of the result. A refused approval throws
   * {@link ToolApprovalDeniedError}; protocol and transport failures throw.
   */
  async call(args: JsonObject = {}, options: RequestOptions = {}): Promise<unknown> {
    if (this.requiresApproval) {
      const approved = (await this.#policy.onApproval?.(this, args)) ?? false;
      if (!approved) throw new ToolApprovalDeniedError(this.name);
    }
    const invalid = await this.#check("input", args);
    if (invalid) return { error: `Invalid arguments for tool ${this.name}: ${invalid}` };
    const result = await this.callRaw(args, options);
    if (this.#policy.wrap) return this.#policy.wrap(result, this);
    if (result.isError) return { error: contentText(result.content ?? []) || "Tool failed" };
    if (this.outputSchema && result.structuredContent !== undefined) {
      const bad = await this.#check("output", result.structuredContent);
      if (bad) return { error: `Tool ${this.name} returned invalid structured content: ${bad}` };
    }
    return result.content;
  }

  /** Calls the tool without approval or validation and returns the whole result. */
  callRaw(args: JsonObject = {}, options: RequestOptions = {}): Promise<CallToolResult> {
    return this.#caller(this, args, options);
  }

  /** Validates against the input or output schema; a message when invalid. */
  async #check(role: "input" | "output", value: unknown): Promise<string | undefined> {
    const schema = this.#schemaFor(role);
    if (!schema) return undefined;
    const outcome = await schema.validate(value);
    return outcome.ok ? undefined : outcome.message;
  }

  #schemaFor(role: "input" | "output"): CompiledSchema | null {
    const cached = this.#compiled[role];
    if (cached !== undefined) return cached;
    const json = role === "input" ? this.inputSchema : this.outputSchema;
    let compiled: CompiledSchema | null = null;
    try {
      // Interpreted, never compiled to code: these schemas come from the server, not from us.
      if (json) compiled = compileInterpretedSchema(json);
    } catch (error) {
      // A schema we cannot compile is not checked here; the server still checks it.
      this.#warn(
        `Tool ${this.serverName}: ${role} schema not validated: ${(error as Error).message}`,
      );
    }
    this.#compiled[role] = compiled;
    return compiled;
  }
}
