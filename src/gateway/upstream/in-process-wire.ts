import { MessageWire } from "../../client/wire.js";
import type { JsonRpcMessage } from "../../protocol/messages.js";
import { messageOf, retryableError } from "./retryable.js";

/**
 * The official SDK's `Transport`, as far as an SDK server uses it; typed here, since the SDK is
 * no dependency of ours.
 */
export interface SdkTransport {
  start(): Promise<void>;
  send(message: object, options?: object): Promise<void>;
  close(): Promise<void>;
  onclose?: (() => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  onmessage?: ((message: never, extra?: never) => void) | undefined;
}

/** What an official SDK `Server` or `McpServer` offers to be reached: `connect(transport)`. */
export interface SdkServer {
  connect(transport: SdkTransport): Promise<void>;
}

/**
 * A message crosses as it would a pipe: serialized, so neither side keeps a reference into the
 * other's objects, and later, so neither side's handler runs inside the other's `send`.
 */
function across(message: object): JsonRpcMessage {
  return JSON.parse(JSON.stringify(message)) as JsonRpcMessage;
}

/**
 * Both ends of an in-process connection: our client's wire, and the SDK `Transport` its server
 * is connected to, passing messages in order with no process or socket between. Requests in
 * flight when either side closes fail with a retryable error.
 */
export class InProcessWire extends MessageWire {
  readonly transport: SdkTransport;
  readonly #name: string;
  #closedBy: "client" | "server" | undefined;
  /** Resolves when the server side closed the connection. */
  readonly serverClosed: Promise<Error>;

  constructor(name: string) {
    super("stdio", async (message) => this.#toServer(message));
    this.#name = name;
    let serverClosed!: (error: Error) => void;
    this.serverClosed = new Promise((resolve) => {
      serverClosed = resolve;
    });
    this.transport = {
      start: async () => {},
      send: async (message) => {
        if (this.#closedBy) throw new Error("The client has closed the connection");
        const copy = across(message);
        queueMicrotask(() => this.receive(copy));
      },
      close: async () => {
        if (this.#closedBy) return;
        this.#closedBy = "server";
        const error = retryableError(`The upstream ${name} closed the connection`);
        super.fail(error);
        this.transport.onclose?.();
        serverClosed(error);
      },
    };
  }

  override fail(error: unknown): void {
    super.fail(retryableError(`The upstream ${this.#name} ${this.#reason(error)}`, error));
  }

  #reason(error: unknown): string {
    return this.#closedBy === "server" ? "closed the connection" : `failed: ${messageOf(error)}`;
  }

  #toServer(message: JsonRpcMessage): void {
    if (this.#closedBy) throw new Error("The connection is closed");
    const copy = across(message);
    queueMicrotask(() => {
      // Read when delivered: the server installs its handler in `connect`, before `start`.
      const deliver = this.transport.onmessage as ((message: JsonRpcMessage) => void) | undefined;
      deliver?.call(this.transport, copy);
    });
  }

  /** Ends the connection from the client's side: the server hears `onclose`. */
  override async close(): Promise<void> {
    if (this.#closedBy) return;
    this.#closedBy = "client";
    super.fail(retryableError(`The upstream ${this.#name} was closed`));
    this.transport.onclose?.();
  }
}
