import type { JsonObject } from "../protocol/messages.js";
import type { ToolAnnotations as KnownAnnotations } from "../protocol/tool-annotations.js";
import type { LogLevel } from "../protocol/versions.js";
import type { InputRequest } from "./errors.js";

/** Which generation of the protocol a connection speaks (PROTOCOL §1). */
export type Era = "modern" | "legacy";

/** Name and version of a client or server. */
export interface Implementation {
  name: string;
  version: string;
  title?: string;
  [key: string]: unknown;
}

/** A JSON-RPC notification as the client hands it on. */
export interface Notification {
  method: string;
  params?: JsonObject;
}

/** A content block of a tool result or a prompt message. */
export type ContentBlock = JsonObject & { type: string };

/** A tool definition as a server lists it. */
export interface ToolDefinition {
  name: string;
  title?: string;
  description?: string;
  inputSchema: JsonObject;
  outputSchema?: JsonObject;
  annotations?: ToolAnnotations;
  _meta?: JsonObject;
  [key: string]: unknown;
}

/** Hints a server gives about a tool's behaviour, and any it adds of its own. */
export type ToolAnnotations = KnownAnnotations & { [key: string]: unknown };

/** The result of `tools/call`. */
export interface CallToolResult {
  content: ContentBlock[];
  structuredContent?: JsonObject;
  isError?: boolean;
  _meta?: JsonObject;
  [key: string]: unknown;
}

/** What a caller learns about the request an input request belongs to. */
export interface InputContext {
  /** The request that asked (`tools/call`, `prompts/get`, `resources/read`); unknown for a legacy server request. */
  method?: string;
  /** The tool or prompt name, or resource URI, when the request has one. */
  name?: string;
  /** The server's key for this input request (modern era). */
  key?: string;
  /**
   * True when a legacy server request named no request (it came on stdio or the GET stream)
   * and was taken as this one's because it was the only one in flight with its own `onInput`.
   */
  inferred?: boolean;
  signal: AbortSignal;
}

/** Answers a server's input request; the returned object is the result sent back. */
export type InputHandler = (
  params: JsonObject,
  context: InputContext,
) => JsonObject | Promise<JsonObject>;

/**
 * Callbacks answering servers' input requests, in both eras: MRTR `inputRequests` (modern)
 * and server requests on SSE streams or stdio (legacy). The client declares a capability for
 * each callback given, and only those.
 */
export interface InputHandlers {
  /** `elicitation/create`: return an ElicitResult (`{ action, content? }`). */
  elicitation?: InputHandler;
  /** `sampling/createMessage`: return a CreateMessageResult. */
  sampling?: InputHandler;
  /** `roots/list`: return the roots (an array, or a ListRootsResult). */
  roots?: (context: InputContext) => JsonObject[] | JsonObject | Promise<JsonObject[] | JsonObject>;
}

/** Progress a server reports for one request. */
export interface Progress {
  progress: number;
  total?: number;
  message?: string;
}

/** Options every request accepts. */
export interface RequestOptions {
  /** Aborts the request: closes its stream on HTTP, sends `notifications/cancelled` otherwise. */
  signal?: AbortSignal;
  /**
   * Milliseconds a round trip to the server may stay silent: progress notifications restart
   * the count; the time `onInput` callbacks take is not counted. 0 turns it off.
   */
  timeoutMs?: number;
  /** Called for each `notifications/progress` of this request. */
  onProgress?: (progress: Progress) => void;
  /**
   * Takes the other notifications of this request's own stream (its log messages), which then
   * skip the client's `onLog` and `onNotification`. Over stdio only progress is tied to a request.
   */
  onNotification?: (notification: Notification) => void;
  /** Extra `_meta` for the request. */
  meta?: JsonObject;
  /** Skip the cache for list and read results. */
  fresh?: boolean;
  /**
   * Input callbacks of this request alone, used instead of the client's `onInput` for the
   * input requests that belong to it: its modern `input_required` rounds, always; a legacy
   * server request that came on its own HTTP response stream; a legacy server request with no
   * such origin (stdio, the GET stream, HTTP+SSE) only while this is the one request with its
   * own `onInput` in flight on the client, as nothing else tells which request asked (with
   * several, the client's callbacks answer). They declare no capability: what the server may
   * ask is what the client declared at connect, from its own `onInput` and `capabilities`.
   */
  onInput?: InputHandlers;
  /**
   * Called when a `tools/call` becomes a task, and again at each change of its status or
   * message: persist the `taskId` to pick the task up with `resumeTask` after a restart.
   */
  onTask?: (task: Task) => void;
}

/** Where a task is (ext-tasks: task status); the last three are terminal. */
export type TaskStatus = "working" | "input_required" | "completed" | "failed" | "cancelled";

/** A task as the server last described it (ext-tasks: Task). */
export interface Task {
  taskId: string;
  status: TaskStatus;
  statusMessage?: string;
  createdAt: string;
  lastUpdatedAt: string;
  /** Lifetime from creation; null for unlimited. */
  ttlMs: number | null;
  /** How often the server asks to be polled. */
  pollIntervalMs?: number;
  [key: string]: unknown;
}

/** Which change notifications `listen` asks for (spec: patterns/subscriptions). */
export interface ListenFilter {
  toolsListChanged?: boolean;
  promptsListChanged?: boolean;
  resourcesListChanged?: boolean;
  /** Resource URIs whose `notifications/resources/updated` to receive. */
  resourceSubscriptions?: string[];
  /** `notifications/events/list_changed` (SEP-3415), from a server that offers Events. */
  eventsListChanged?: boolean;
}

/** How `listen` follows a modern stream that dropped (see `McpClient.listen`). */
export interface ReconnectOptions {
  /** Reconnection attempts in a row, none acknowledged, before the iterator throws. @default 10 */
  maxAttempts?: number;
  /** The first delay, doubled after each failed attempt (jittered). @default 250 */
  initialDelayMs?: number;
  /** The longest delay between attempts. @default 5000 */
  maxDelayMs?: number;
}

/** Options of `McpClient.listen`. */
export interface ListenOptions {
  /** Ends the iteration cleanly. */
  signal?: AbortSignal;
  /** Reconnect a dropped `subscriptions/listen` stream, or end the iteration (`false`). @default {} */
  reconnect?: ReconnectOptions | false;
}

/** What the `input_required` loop needs to know about the request it drives. */
export interface InputRequiredResult {
  resultType: "input_required";
  inputRequests?: Record<string, InputRequest>;
  requestState?: string;
}

/** A log message a server sent (`notifications/message`). */
export interface LogMessage {
  level: LogLevel;
  logger?: string;
  data: unknown;
}
