import type { McpError } from "../../protocol/errors.js";
import type {
  JsonObject,
  JsonRpcMessage,
  JsonRpcRequest,
  RequestId,
} from "../../protocol/messages.js";
import type { TransportContext } from "../context.js";
import type { ServerExtension } from "../extension.js";
import type { ListenHub } from "../listen-hub.js";
import type { McpServer } from "../mcp-server.js";

/** A request's environment as an era builds it; the session adds the abort flag and `send`. */
export type EraEnv = Omit<TransportContext, "abort" | "send">;

/** What a stdio session lends its two eras: the one channel to the client, and the server. */
export interface StdioChannel {
  readonly server: McpServer;
  /** The extensions stdio serves (those that derive from the registrations, such as skills). */
  readonly extensions: readonly ServerExtension[];
  /** Feeds change events to listen streams and to the legacy session. */
  readonly hub: ListenHub;
  onError(error: unknown): void;
  /** Writes a message to the client; nothing once the session closed. */
  write(message: JsonRpcMessage): undefined;
  /** Answers request `id` with `error`; without an id, for a message that had none. */
  fail(id: RequestId | undefined, error: McpError): undefined;
  /** Runs a request through the dispatcher and answers it, unless the client cancelled it. */
  run(request: JsonRpcRequest, env: EraEnv): void;
  /** Sends a server-to-client request and waits for the client's answer (legacy era). */
  request(
    method: string,
    params: JsonObject,
    signal: AbortSignal,
    onSent?: (id: RequestId) => void,
  ): Promise<JsonObject>;
}
