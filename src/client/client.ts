import type { EventDescriptor, PollEventsResult } from "../protocol/events.js";
import type { JsonObject } from "../protocol/messages.js";
import { ClientCore } from "./client-core.js";
import { openClientSession } from "./connect.js";
import {
  type EventStreamOptions,
  type EventSubscription,
  type EventsHost,
  listEvents,
  type PollEventsOptions,
  pollEvents,
  type SubscribeEventsOptions,
  subscribeEvents,
  type WebhookSubscribeOptions,
  type WebhookSubscription,
} from "./ext/events/index.js";
import { type Skill, skillsOf } from "./ext/skills/index.js";
import { followTask } from "./ext/tasks/index.js";
import type { McpClientOptions } from "./options.js";
import { asCallToolResult } from "./tool-catalog.js";
import type { CallToolResult, Notification, RequestOptions } from "./types.js";
import type { Wire } from "./wire.js";

/**
 * A dual-era MCP client: modern (2026-07-28, stateless, multi round-trip input) or legacy
 * (`initialize` and a session), over Streamable HTTP or any other {@link Wire} such as stdio.
 *
 * @example
 * ```ts
 * import { McpClient } from "mcp-mount/client";
 * const client = await McpClient.connect("http://localhost:3000/mcp");
 * const result = await client.callTool("forecast", { city: "Paris" });
 * console.log(client.era, result.content);
 * await client.close();
 * ```
 */
export class McpClient extends ClientCore {
  /**
   * Connects to a server: a Streamable HTTP URL, or a wire such as `stdio(...)` from
   * `mcp-mount/client/stdio`. Detects the era (modern first, then `initialize`).
   *
   * @example
   * ```ts
   * import { McpClient } from "mcp-mount/client";
   * const client = await McpClient.connect("https://example.com/mcp", {
   *   headers: { Authorization: "Bearer my-token" },
   *   onInput: { elicitation: async () => ({ action: "decline" }) },
   * });
   * ```
   */
  static async connect(
    target: string | URL | Wire,
    options: McpClientOptions = {},
  ): Promise<McpClient> {
    let client: McpClient | undefined;
    // What arrives while the session opens (a legacy GET stream) is handed on once it is open.
    const early: Notification[] = [];
    const session = await openClientSession(target, options, (notification) =>
      client ? client.deliver(notification) : early.push(notification),
    );
    client = new McpClient(session, options);
    for (const notification of early.splice(0)) client.deliver(notification);
    return client;
  }

  /**
   * The server's skills (SEP-2640, `skills/list`), or with `uri` the one `skills/get` names;
   * no file is fetched before `skill.load()` or `skill.read(path)`.
   * @example
   * ```ts
   * import { McpClient } from "mcp-mount/client";
   * const client = await McpClient.connect("http://localhost:3000/mcp");
   * for (const skill of await client.skills()) console.log(skill.name, skill.description);
   * ```
   */
  skills(options: RequestOptions & { uri?: string } = {}): Promise<Skill[]> {
    return skillsOf(this, options);
  }

  /**
   * Follows a task the server created for a `tools/call` (its `taskId`, as `onTask` saw it) to
   * its result, as `callTool` does: a restarted app picks up where it left off.
   *
   * @example
   * ```ts
   * import { McpClient } from "mcp-mount/client";
   * const client = await McpClient.connect("http://localhost:3000/mcp");
   * let taskId = "";
   * await client.callTool("render", {}, { onTask: (task) => { taskId = task.taskId; } });
   * // After a restart, with taskId read back from where onTask kept it:
   * const result = await client.resumeTask(taskId);
   * ```
   */
  async resumeTask(taskId: string, options: RequestOptions = {}): Promise<CallToolResult> {
    const request = this.requests.extensionRequest("tasks/get", { taskId }, options);
    return asCallToolResult(await followTask(taskId, request));
  }

  /**
   * The server's event types (SEP-3415 `events/list`, every page): name, delivery modes,
   * schemas; none when the server does not offer Events.
   *
   * @example
   * ```ts
   * import { McpClient } from "mcp-mount/client";
   * const client = await McpClient.connect("http://localhost:3000/mcp");
   * for (const event of await client.events()) console.log(event.name, event.delivery);
   * ```
   */
  events(options: RequestOptions = {}): Promise<EventDescriptor[]> {
    return listEvents(this.#events, options);
  }

  /**
   * One `events/poll`: the occurrences after `options.cursor` (null, the default, starts from
   * now and returns none), the cursor to poll from next, `truncated`, `hasMore`, `nextPollMs`.
   */
  pollEvents(
    name: string,
    args: JsonObject = {},
    options: PollEventsOptions = {},
  ): Promise<PollEventsResult> {
    return pollEvents(this.#events, name, args, options);
  }

  /**
   * Subscribes to an event type once it is live, and iterates its occurrences, each `eventId`
   * once: `push` holds an `events/stream` (opened again from the cursor when it drops or goes
   * silent), `poll` loops on `events/poll` at the server's pace; without `delivery`, push when
   * offered. `sub.cursor` is what to persist (and pass back as `cursor`); a `terminated`
   * subscription throws its error. With `delivery: "webhook"` the server POSTs to your
   * receiver (`mcp-mount/events/receiver`) and this iterates each refresh's status instead.
   *
   * @example
   * ```ts
   * import { McpClient } from "mcp-mount/client";
   * const client = await McpClient.connect("http://localhost:3000/mcp");
   * const sub = await client.subscribeEvents("incident.created", { severity: "P1" });
   * for await (const event of sub) console.log(event.eventId, event.data, sub.cursor);
   * ```
   */
  subscribeEvents(
    name: string,
    args: JsonObject,
    options: WebhookSubscribeOptions,
  ): Promise<WebhookSubscription>;
  subscribeEvents(
    name: string,
    args?: JsonObject,
    options?: EventStreamOptions,
  ): Promise<EventSubscription>;
  subscribeEvents(
    name: string,
    args?: JsonObject,
    options?: SubscribeEventsOptions,
  ): Promise<EventSubscription | WebhookSubscription>;
  subscribeEvents(
    name: string,
    args: JsonObject = {},
    options: SubscribeEventsOptions = {},
  ): Promise<EventSubscription | WebhookSubscription> {
    return subscribeEvents(this.#events, name, args, options);
  }

  /** What the events helpers use: requests whose stream notifications they take. */
  get #events(): EventsHost {
    const session = this.session;
    return {
      era: session.era,
      server: session.server,
      wireKind: session.wire.kind,
      request: (method, params, options) => this.requests.request(method, params, options),
    };
  }
}
