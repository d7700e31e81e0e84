import type { AuthInfo } from "../auth/types.js";
import type { JsonObject, RequestId } from "../protocol/messages.js";
import type { ToolAnnotations } from "../protocol/tool-annotations.js";
import type { LogLevel } from "../protocol/versions.js";
import type { SchemaInput, StandardSchemaV1 } from "./schema.js";

/** Name and version of a client or server. */
export interface Implementation {
  name: string;
  version: string;
  title?: string;
  description?: string;
  websiteUrl?: string;
  icons?: Icon[];
}

/** An icon for a tool, prompt, resource or implementation. */
export interface Icon {
  src: string;
  mimeType?: string;
  sizes?: string[];
  theme?: "light" | "dark";
}

/** A content block in tool results and prompt messages. */
export type ContentBlock = JsonObject & { type: string };

/** A full tool result, as the wire carries it. */
export interface ToolResult {
  content: ContentBlock[];
  structuredContent?: unknown;
  isError?: boolean;
  _meta?: JsonObject;
}

/** Types defined lower down (auth, protocol) that handlers meet, re-exported for one import. */
export type { AuthInfo, ToolAnnotations };

/** Which era a request belongs to. */
export type Era = "modern" | "legacy";

/** Parameters of an `elicitation/create` request. */
export type ElicitParams = JsonObject & { message: string };
/** Parameters of a `sampling/createMessage` request. */
export type SampleParams = JsonObject & { messages: unknown[]; maxTokens: number };

/**
 * What every handler receives besides its arguments: one API for both eras. `App` is the type
 * of the app's own per-request context (`new McpServer<App>()`), computed by the adapter's
 * `context` function for each HTTP request.
 */
export interface HandlerContext<App = unknown> {
  readonly era: Era;
  readonly protocolVersion: string;
  readonly requestId: RequestId;
  readonly method: string;
  /** Aborts when the client closes the stream or cancels the request. */
  readonly signal: AbortSignal;
  /** The request's `_meta`. */
  readonly meta: JsonObject;
  readonly client: { info?: Implementation; capabilities: JsonObject };
  readonly auth: AuthInfo | undefined;
  /**
   * The app's context for this HTTP request (the user its login found, a request id, a database
   * handle...), from the adapter's `context` option; undefined without one. Computed again on
   * every request, so a multi round-trip retry, a legacy reply or a `tasks/get` on another
   * process sees that request's context; only `state` travels between rounds.
   */
  readonly app: App;
  /** Legacy session id, when the request belongs to one. */
  readonly sessionId: string | undefined;
  /** Handler state that survives multi round-trip retries (sealed in `requestState`). */
  readonly state: JsonObject;
  /** Reports progress when the request asked for it; a no-op otherwise. */
  progress(progress: number, total?: number, message?: string): Promise<void>;
  /** Sends a log message when the request's level lets it through. */
  log(level: LogLevel, data: unknown, logger?: string): Promise<void>;
  /**
   * Closes this request's SSE stream early, asking the client to reconnect and poll for the rest
   * (legacy 2025-11-25 resumable streams); a no-op where the era or transport has no such thing.
   */
  closeStream(): void;
  /** Asks the user for input through the client. */
  elicit(key: string, params: ElicitParams): Promise<JsonObject>;
  /** Asks the client's model for a completion. */
  sample(key: string, params: SampleParams): Promise<JsonObject>;
  /** Asks the client for its roots. */
  roots(key?: string): Promise<JsonObject>;
  /**
   * Turns the rest of this tool call into a task (`io.modelcontextprotocol/tasks`) for a tool
   * registered with `taskSupport` and `taskStart: "handler"`, when the client declared the
   * extension: resolves once the task is stored and the client has its handle; true then. Later
   * input calls are answered through the task, and `signal` aborts on `tasks/cancel`. Resolves
   * false (the call goes on as usual) anywhere else.
   */
  startTask(): Promise<boolean>;
  /**
   * Charges `points` more to the caller's rate-limit budget (`rateLimit`), for work whose cost
   * shows only as it runs (tokens, rows): resolves when they fit; throws the rate-limit error
   * (`-32005`) when they do not, which answers the request (429, or on its stream when it has
   * sent something already). A no-op without a rate limit (and on stdio).
   */
  charge(points: number): Promise<void>;
}

/** Anything a tool handler may return: a string, a JSON value, or a full result. */
export type ToolReturn = string | ToolResult | unknown;

/** Options of {@link McpServer.tool}. */
export interface ToolOptions<Input = JsonObject> {
  name: string;
  title?: string;
  description?: string;
  icons?: Icon[];
  annotations?: ToolAnnotations;
  /** JSON Schema (2020-12 by default) or a Standard Schema validator. */
  input?: SchemaInput | StandardSchemaV1<unknown, Input>;
  output?: SchemaInput;
  /** OAuth scopes a caller needs for this tool. */
  scopes?: string[];
  /**
   * Whether a call may run as a task for clients that declare the tasks extension: "optional"
   * (they get a task, others a blocking call) or "required" (others get -32021). @default none
   */
  taskSupport?: "optional" | "required";
  /**
   * When the task begins: "call" (before the handler runs) or "handler" (when it calls
   * `ctx.startTask()`, e.g. after gathering input with multi round-trip requests, or only for
   * large jobs; a handler that never calls it answers synchronously). @default "call"
   */
  taskStart?: "call" | "handler";
  /**
   * Whether the server checks arguments against `input` and structured content against
   * `output`. `false` advertises a JSON Schema as given, uncompiled, for a tool that hands its
   * arguments to something that checks them itself (a gateway's upstream). @default true
   */
  validate?: boolean;
  _meta?: JsonObject;
}

/** A tool handler. */
export type ToolHandler<Input = JsonObject, App = unknown> = (
  args: Input,
  ctx: HandlerContext<App>,
) => ToolReturn | Promise<ToolReturn>;

/** Completes a partial argument value. */
export type Completer<App = unknown> = (
  value: string,
  context: { arguments: Record<string, string>; ctx: HandlerContext<App> },
) => string[] | Promise<string[]>;

/** One argument of a prompt. */
export interface PromptArgument {
  name: string;
  title?: string;
  description?: string;
  required?: boolean;
  /** Suggests values for `completion/complete`. */
  complete?: Completer;
}

/** Options of {@link McpServer.prompt}; `Args` is the argument list as written. */
export interface PromptOptions<Args extends readonly PromptArgument[] = PromptArgument[]> {
  name: string;
  title?: string;
  description?: string;
  icons?: Icon[];
  arguments?: Args;
  scopes?: string[];
  _meta?: JsonObject;
}

/** A prompt message. */
export interface PromptMessage {
  role: "user" | "assistant";
  content: ContentBlock;
}

/** What a prompt handler may return. */
export type PromptReturn =
  | string
  | PromptMessage[]
  | { description?: string; messages: PromptMessage[]; _meta?: JsonObject };

/** A prompt handler. */
export type PromptHandler<Args = Record<string, string>, App = unknown> = (
  args: Args,
  ctx: HandlerContext<App>,
) => PromptReturn | Promise<PromptReturn>;

/** Caching hints for a result (spec: utilities/caching). */
export interface CacheHints {
  /** @default 0 */
  ttlMs?: number;
  /** @default "public" */
  cacheScope?: "public" | "private";
}

/** Fields shared by resources and templates. */
interface ResourceBase extends CacheHints {
  name: string;
  title?: string;
  description?: string;
  mimeType?: string;
  icons?: Icon[];
  annotations?: JsonObject;
  scopes?: string[];
  _meta?: JsonObject;
}

/** Options of {@link McpServer.resource}. */
export interface ResourceOptions extends ResourceBase {
  uri: string;
  size?: number;
}

/** One entry of `contents` in a read result. */
export type ResourceContents = JsonObject & { uri: string };

/** What a resource handler may return. */
export type ResourceReturn =
  | string
  | Uint8Array
  | ResourceContents
  | ResourceContents[]
  | { contents: ResourceContents[]; _meta?: JsonObject };

/** A resource handler. */
export type ResourceHandler<App = unknown> = (
  uri: string,
  ctx: HandlerContext<App>,
) => ResourceReturn | Promise<ResourceReturn>;

/** Options of {@link McpServer.resourceTemplate}. */
export interface ResourceTemplateOptions<App = unknown> extends ResourceBase {
  uriTemplate: string;
  /** Lists concrete resources of this template for `resources/list`. */
  list?: (ctx: HandlerContext<App>) => ResourceOptions[] | Promise<ResourceOptions[]>;
  /** Completers per template variable. */
  complete?: Record<string, Completer<App>>;
}

/** A resource template handler; `variables` are the matched template values. */
export type ResourceTemplateHandler<App = unknown> = (
  uri: string,
  variables: Record<string, string>,
  ctx: HandlerContext<App>,
) => ResourceReturn | Promise<ResourceReturn>;

/** A custom JSON-RPC method handler. */
export type MethodHandler<App = unknown> = (
  params: JsonObject,
  ctx: HandlerContext<App>,
) => JsonObject | Promise<JsonObject>;
