import type { JsonObject } from "../protocol/messages.js";
import { frozenJsonCopy } from "../utils/json-text.js";
import { eventsOf } from "./ext/events/registry.js";
import type { EmitOptions, EmitResult, EventRegistration } from "./ext/events/types.js";
import type { InferJsonSchema, PromptArgs, ToolArgs } from "./infer-args.js";
import {
  type ChangeEvent,
  capabilitiesOf,
  definitionOf,
  type McpServerOptions,
  type RegisteredPrompt,
  type RegisteredResource,
  type RegisteredTemplate,
  type RegisteredTool,
  type Registration,
  toolEntry,
} from "./registry.js";
import type {
  Implementation,
  MethodHandler,
  PromptArgument,
  PromptHandler,
  PromptOptions,
  ResourceHandler,
  ResourceOptions,
  ResourceTemplateHandler,
  ResourceTemplateOptions,
  ToolHandler,
  ToolOptions,
} from "./types.js";
import { parseUriTemplate } from "./uri-template.js";

/** The lists a registration changes. */
type ListKind = "tools" | "prompts" | "resources";

export type {
  ChangeEvent,
  McpServerOptions,
  RegisteredPrompt,
  RegisteredResource,
  RegisteredTemplate,
  RegisteredTool,
  Registration,
} from "./registry.js";
export { cacheHints } from "./registry.js";

const RESERVED_METHOD =
  /^(initialize|ping|server\/|tools\/|prompts\/|resources\/|completion\/|logging\/|subscriptions\/|tasks\/|events\/|elicitation\/|sampling\/|roots\/|notifications\/)/;

/**
 * An MCP server: the registry of tools, prompts and resources, free of any transport. `App` is
 * the type of the app's per-request context that handlers read as `ctx.app`.
 *
 * @example
 * ```ts
 * import { McpServer } from "mcp-mount";
 *
 * const server = new McpServer<{ userId: string }>({ name: "notes", version: "1.0.0" });
 * server.tool({ name: "whoami" }, (_args, ctx) => ctx.app.userId);
 * ```
 */
export class McpServer<App = unknown> {
  readonly info: Implementation;
  readonly instructions: string | undefined;
  readonly pageSize: number;
  readonly cache: NonNullable<McpServerOptions["cache"]>;
  readonly tools = new Map<string, RegisteredTool>();
  readonly prompts = new Map<string, RegisteredPrompt>();
  readonly resources = new Map<string, RegisteredResource>();
  readonly templates = new Map<string, RegisteredTemplate>();
  readonly methods = new Map<string, MethodHandler>();
  readonly #listeners = new Set<(event: ChangeEvent) => void>();

  constructor(options: McpServerOptions) {
    const { instructions, pageSize, cache, ...info } = options;
    // Frozen, a copy: it goes out on every modern answer as text serialised once (era-policy.ts).
    this.info = frozenJsonCopy(info);
    this.instructions = instructions;
    this.pageSize = pageSize ?? 100;
    this.cache = cache ?? {};
    if (!Number.isInteger(this.pageSize) || this.pageSize < 1) {
      throw new RangeError("pageSize must be a positive integer");
    }
  }

  /**
   * Registers a tool whose `input` is a JSON Schema written inline: the handler's arguments are
   * typed from it (see {@link InferJsonSchema}). Its schemas are compiled now, so a bad one throws.
   *
   * @example
   * ```ts
   * server.tool(
   *   {
   *     name: "forecast",
   *     input: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
   *   },
   *   ({ city }) => `Sunny in ${city.toUpperCase()}`,
   * );
   * ```
   */
  tool<const Schema extends JsonObject>(
    options: ToolOptions & { input: Schema },
    handler: ToolHandler<ToolArgs<Schema>, App>,
  ): Registration;
  /**
   * Registers a tool; `Input` is inferred from a Standard Schema `input` (e.g. zod 4) or given
   * explicitly. Its schemas are compiled now, so a bad one throws.
   */
  tool<Input = JsonObject>(
    options: ToolOptions<Input>,
    handler: ToolHandler<Input, App>,
  ): Registration;
  tool(options: ToolOptions<unknown>, handler: ToolHandler<never, App>): Registration {
    if (this.tools.has(options.name)) throw new TypeError(`Duplicate tool: ${options.name}`);
    const entry = toolEntry(options as ToolOptions, handler as unknown as ToolHandler);
    return this.#register(this.tools, options.name, entry, "tools");
  }

  /**
   * Registers a prompt; the handler's arguments are typed from the `arguments` list as written.
   *
   * @example
   * ```ts
   * server.prompt(
   *   { name: "summarize", arguments: [{ name: "topic", required: true }] },
   *   ({ topic }) => `Summarize what we know about ${topic}.`,
   * );
   * ```
   */
  prompt<const Args extends readonly PromptArgument[] = PromptArgument[]>(
    options: PromptOptions<Args>,
    handler: PromptHandler<PromptArgs<Args>, App>,
  ): Registration;
  prompt(
    options: PromptOptions,
    handler: PromptHandler<Record<string, string>, App>,
  ): Registration {
    if (this.prompts.has(options.name)) throw new TypeError(`Duplicate prompt: ${options.name}`);
    const definition = definitionOf(options, ["scopes"]);
    if (options.arguments) {
      definition.arguments = options.arguments.map((argument) => definitionOf(argument, []));
    }
    const entry = { options, handler: handler as PromptHandler, definition };
    return this.#register(this.prompts, options.name, entry, "prompts");
  }

  /**
   * Registers a resource at a fixed URI.
   *
   * @example
   * ```ts
   * server.resource({ uri: "notes://readme", name: "readme", mimeType: "text/markdown" }, () =>
   *   "# Notes",
   * );
   * ```
   */
  resource(options: ResourceOptions, handler: ResourceHandler<App>): Registration {
    if (this.resources.has(options.uri)) throw new TypeError(`Duplicate resource: ${options.uri}`);
    const definition = definitionOf(options, ["scopes", "ttlMs", "cacheScope"]);
    const entry = { options, handler: handler as ResourceHandler, definition };
    return this.#register(this.resources, options.uri, entry, "resources");
  }

  /**
   * Registers a resource template (RFC 6570, levels 1 to 3).
   *
   * @example
   * ```ts
   * server.resourceTemplate(
   *   { uriTemplate: "notes://{id}", name: "note", mimeType: "text/plain" },
   *   (uri, { id }) => ({ uri, text: `Note ${id}` }),
   * );
   * ```
   */
  resourceTemplate(
    options: ResourceTemplateOptions<App>,
    handler: ResourceTemplateHandler<App>,
  ): Registration {
    if (this.templates.has(options.uriTemplate)) {
      throw new TypeError(`Duplicate resource template: ${options.uriTemplate}`);
    }
    const template = parseUriTemplate(options.uriTemplate);
    const definition = definitionOf(options, ["scopes", "ttlMs", "cacheScope", "complete"]);
    const entry = {
      options: options as ResourceTemplateOptions,
      handler: handler as ResourceTemplateHandler,
      template,
      definition,
    };
    return this.#register(this.templates, options.uriTemplate, entry, "resources");
  }

  /** Registers a custom JSON-RPC method; protocol method names are refused. */
  method(name: string, handler: MethodHandler<App>): Registration {
    if (RESERVED_METHOD.test(name)) throw new TypeError(`Method name is reserved: ${name}`);
    if (this.methods.has(name)) throw new TypeError(`Duplicate method: ${name}`);
    this.methods.set(name, handler as MethodHandler);
    return { remove: () => this.methods.delete(name) };
  }

  /**
   * Tells every listening client that the tool list changed (registering or removing a tool
   * already does).
   *
   * @example
   * ```ts
   * server.notifyToolsListChanged();
   * ```
   */
  notifyToolsListChanged(): void {
    this.#emit({ kind: "tools" });
  }

  /**
   * Tells every listening client that the prompt list changed.
   *
   * @example
   * ```ts
   * server.notifyPromptsListChanged();
   * ```
   */
  notifyPromptsListChanged(): void {
    this.#emit({ kind: "prompts" });
  }

  /**
   * Tells every listening client that the resource list changed.
   *
   * @example
   * ```ts
   * server.notifyResourcesListChanged();
   * ```
   */
  notifyResourcesListChanged(): void {
    this.#emit({ kind: "resources" });
  }

  /**
   * Tells clients subscribed to `uri` that the resource changed.
   *
   * @example
   * ```ts
   * server.notifyResourceUpdated("notes://readme"); // after its content changed
   * ```
   */
  notifyResourceUpdated(uri: string): void {
    this.#emit({ kind: "resource", uri });
  }

  /** Listens to change events; returns the function that stops listening. */
  onChange(listener: (event: ChangeEvent) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** The capabilities this server advertises, derived from what is registered. */
  capabilities(): JsonObject {
    return capabilitiesOf(this.prompts.values(), this.templates.values());
  }

  /**
   * Registers an event type (Events extension, docs/events.md): served by poll and push, and
   * webhook where the handler has `events.webhooks`. Its schemas are compiled now.
   *
   * @example
   * ```ts
   * server.event({ name: "note.created", payloadSchema: { type: "object" } });
   * ```
   */
  event(options: EventRegistration): Registration {
    return eventsOf(this).register(options);
  }

  /**
   * Emits an occurrence of event type `name` to its subscribers, on every process: appended to
   * the feed of each store the server is served from, after `data` passes its `payloadSchema`.
   *
   * @example
   * ```ts
   * await server.emit("note.created", { id: "n1" }, { eventId: "upstream-42" });
   * ```
   */
  emit(name: string, data: JsonObject, options?: EmitOptions): Promise<EmitResult> {
    return eventsOf(this).emit(name, data, options);
  }

  #register<T>(map: Map<string, T>, key: string, entry: T, kind: ListKind): Registration {
    map.set(key, entry);
    this.#emit({ kind });
    return {
      remove: () => {
        if (map.get(key) === entry && map.delete(key)) this.#emit({ kind });
      },
    };
  }

  #emit(event: ChangeEvent): void {
    for (const listener of this.#listeners) listener(event);
  }
}
