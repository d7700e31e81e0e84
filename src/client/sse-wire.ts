import { McpHttpError } from "./errors.js";
import type { HttpOptions } from "./http-wire.js";
import { readEvents } from "./sse.js";
import { MessageWire } from "./wire.js";

/**
 * The deprecated HTTP+SSE transport (2024-11-05), for servers that predate Streamable HTTP:
 * a GET opens an SSE stream whose first `endpoint` event names where to POST messages; every
 * answer comes back on the stream (spec: streamable-http, backward compatibility).
 */
export class SseWire extends MessageWire {
  readonly url: URL;
  private readonly options: HttpOptions;
  private readonly fetch: typeof fetch;
  private readonly stream = new AbortController();
  private endpoint: URL | undefined;

  constructor(url: string | URL, options: HttpOptions = {}) {
    super("sse", (message) => this.post(message));
    this.url = new URL(url);
    this.options = options;
    this.fetch = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
  }

  private async headers(): Promise<Headers> {
    const given = this.options.headers;
    return new Headers(typeof given === "function" ? await given() : given);
  }

  /** Opens the stream and waits for its `endpoint` event. */
  async open(signal?: AbortSignal): Promise<void> {
    const headers = await this.headers();
    headers.set("accept", "text/event-stream");
    const opening = signal ? AbortSignal.any([signal, this.stream.signal]) : this.stream.signal;
    const response = await this.fetch(this.url, { method: "GET", headers, signal: opening });
    const type = response.headers.get("content-type") ?? "";
    if (!response.ok || !response.body || !type.startsWith("text/event-stream")) {
      await response.body?.cancel();
      throw new McpHttpError(response.status, response.headers, "no SSE stream");
    }
    const events = readEvents(response.body, undefined, this.stream.signal);
    const first = await events.next();
    if (first.done || first.value.event !== "endpoint") {
      await events.return(undefined);
      throw new McpHttpError(response.status, response.headers, "no endpoint event");
    }
    this.endpoint = new URL(first.value.data.trim(), this.url);
    if (this.endpoint.origin !== this.url.origin) {
      await events.return(undefined);
      throw new Error(`The SSE endpoint ${this.endpoint.origin} is not on ${this.url.origin}`);
    }
    void this.read(events);
  }

  private async read(events: AsyncGenerator<{ event?: string; data: string }>): Promise<void> {
    try {
      for await (const event of events) {
        if (event.event !== undefined && event.event !== "message") continue;
        try {
          this.receive(JSON.parse(event.data));
        } catch {
          // A malformed event is skipped; the request it answered times out.
        }
      }
      this.fail(new Error("The server closed the SSE stream"));
    } catch (error) {
      this.fail(error);
    }
  }

  private async post(message: unknown): Promise<void> {
    if (!this.endpoint) throw new Error("The SSE transport is not open");
    const headers = await this.headers();
    headers.set("content-type", "application/json");
    const response = await this.fetch(this.endpoint, {
      method: "POST",
      headers,
      body: JSON.stringify(message),
    });
    const body = await response.text().catch(() => "");
    if (!response.ok) throw new McpHttpError(response.status, response.headers, body);
  }

  override async close(): Promise<void> {
    this.stream.abort();
    await super.close();
  }
}
