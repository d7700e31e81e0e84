import { ErrorCode, invalidParams, isMcpError, McpError } from "../../protocol/errors.js";
import type { JsonRpcRequest } from "../../protocol/messages.js";
import { servedListenFlags } from "../extension.js";
import { type ListenFilter, listenSink, parseListenFilter } from "../listen-hub.js";
import { hasMethod } from "../method-handlers.js";
import { type ModernMeta, readModernMeta, unsupportedVersion } from "../modern-meta.js";
import type { StdioChannel } from "./channel.js";

/** A modern request, checked: its `_meta`, and its listen filter when it is `subscriptions/listen`. */
type CheckedRequest = { meta: ModernMeta; filter?: ListenFilter };

/**
 * The modern era on a stdio channel: every request carries its version and capabilities in
 * `_meta`, so nothing is kept between requests but the open listen streams, by request id.
 */
export class ModernStdio {
  readonly #channel: StdioChannel;
  readonly #listens = new Map<string, () => void>();

  constructor(channel: StdioChannel) {
    this.#channel = channel;
  }

  /** Serves one modern request: a listen stream, or a call the dispatcher answers. */
  serve(request: JsonRpcRequest): undefined {
    const channel = this.#channel;
    let checked: CheckedRequest;
    try {
      checked = this.#check(request);
    } catch (error) {
      return channel.fail(request.id, isMcpError(error) ? error : invalidParams(String(error)));
    }
    const { meta, filter } = checked;
    if (filter) return this.#listen(request, filter);
    channel.run(request, {
      era: "modern",
      protocolVersion: meta.version,
      clientCapabilities: meta.capabilities,
      clientInfo: meta.clientInfo,
      logLevel: meta.logLevel,
      onError: channel.onError,
    });
  }

  /** Ends the listen stream request `id` opened, if any (`notifications/cancelled`). */
  cancel(id: string): void {
    this.#listens.get(id)?.();
  }

  /** Throws the McpError to answer with when the request's `_meta` or params are wrong. */
  #check(request: JsonRpcRequest): CheckedRequest {
    const params = request.params ?? {};
    const meta = readModernMeta(params);
    const unsupported = unsupportedVersion(meta.version);
    if (unsupported) throw unsupported;
    if (request.method === "subscriptions/listen") {
      const served = servedListenFlags(this.#channel.extensions);
      return { meta, filter: parseListenFilter(params, served) };
    }
    if (!hasMethod(this.#channel.server, request.method, this.#channel.extensions)) {
      throw new McpError(ErrorCode.MethodNotFound, `Method not found: ${request.method}`);
    }
    return { meta };
  }

  #listen(request: JsonRpcRequest, filter: ListenFilter): undefined {
    const key = String(request.id);
    const writer = {
      send: this.#channel.write,
      // stdio has no comments to keep a line alive.
      writeRaw: () => {},
      close: () => this.cancel(key),
    };
    const remove = this.#channel.hub.add(listenSink(request.id, writer, filter));
    this.#listens.set(key, () => {
      remove();
      this.#listens.delete(key);
    });
  }
}
