import type { JsonObject } from "../protocol/messages.js";
import type { LogLevel } from "../protocol/versions.js";
import type { TelemetryOptions } from "../telemetry/telemetry.js";
import type { ResultCache } from "./cache.js";
import type { HttpOptions } from "./http-wire.js";
import type { OAuthOptions } from "./oauth/types.js";
import type { ToolPolicy } from "./tool.js";
import type { Era, Implementation, InputHandlers, LogMessage, Notification } from "./types.js";

/** Options of `McpClient.connect`. */
export interface McpClientOptions extends HttpOptions, ToolPolicy {
  /** Who the client is. @default { name: "mcp-mount-client", version: "0.1.0" } */
  clientInfo?: Implementation;
  /** Callbacks answering servers' input requests; capabilities are declared for these only. */
  onInput?: InputHandlers;
  /** Capabilities declared beyond those the callbacks imply (merged over them). */
  capabilities?: JsonObject;
  /**
   * Declare the tasks extension on `tools/call` (modern era), so a server may answer with a task
   * the client then polls to its result; `false` asks for blocking calls. @default true
   */
  tasks?: boolean;
  /** `input_required` retries allowed per request. @default 8 */
  maxInputRounds?: number;
  /** Milliseconds a round trip may go without an answer or progress; 0 for none. @default 60000 */
  timeoutMs?: number;
  /** Ask servers for log messages at this level and above (see `onLog`). */
  logLevel?: LogLevel;
  /** Receives the servers' log messages. */
  onLog?: (message: LogMessage) => void;
  /** Receives every notification that reaches the client outside a request's own stream. */
  onNotification?: (notification: Notification) => void;
  /** Speak one era, or detect it. @default "auto" */
  era?: Era | "auto";
  /** Remember detected eras per HTTP endpoint: in this process by default, or in your map. */
  eraCache?: Map<string, Era> | false;
  /**
   * Keep list and read results for their `ttlMs`, until a change notification: in a cache of
   * the client's own, in a {@link ResultCache} shared with other clients, or not at all.
   * @default true
   */
  cache?: boolean | ResultCache;
  /**
   * Who the client acts for, when a cache is shared: clients with the same context share
   * `private` results too. @default a context of the client's own
   */
  cacheContext?: string;
  /** How long a stdio probe waits for `server/discover`. @default 3000 */
  probeTimeoutMs?: number;
  /** Receives warnings, such as tools excluded for invalid `x-mcp-header`. @default console.warn */
  onWarning?: (message: string) => void;
  /**
   * Sign in to a server protected by OAuth (MCP authorization): discovery on 401, a client
   * identity, the user's sign-in through `redirect` (or client credentials), refresh and
   * step-up; the token goes to the server's origin only. Needs the `oauth4webapi` peer.
   */
  auth?: OAuthOptions;
  /** Aborts connecting. */
  signal?: AbortSignal;
  /**
   * OpenTelemetry: a CLIENT span and `mcp.client.operation.duration` per message sent, its trace
   * context in `params._meta` so the server's spans join the trace; through the global
   * providers an SDK registers (nothing is recorded when none is), these providers, or `false`
   * for none. @default the global providers
   */
  telemetry?: TelemetryOptions | false;
}

/** A prompt, resource or resource template as listed. */
export type Listed = JsonObject & { name: string };
