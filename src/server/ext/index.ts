import { createTelemetry, type TelemetryOptions } from "../../telemetry/telemetry.js";
import { addedExtensions, type ExtensionHost, type ServerExtension } from "../extension.js";
import type { McpServer } from "../mcp-server.js";
import { appsExtension } from "./apps/index.js";
import { type EventsHost, type EventsOptions, eventsExtension } from "./events/index.js";
import { skillsExtension } from "./skills/index.js";
import { type TaskOptions, tasksExtension } from "./tasks/index.js";

/** The built-in extensions' options, part of `createMcpHandler`'s options. */
export interface ExtensionOptions {
  /**
   * The tasks extension (`io.modelcontextprotocol/tasks`): tools with `taskSupport` run as
   * tasks for clients that declare it; `false` turns it off. @default {}
   */
  tasks?: TaskOptions | false;
  /**
   * The Events extension (`io.modelcontextprotocol/events`, SEP-3415): event types registered
   * with `server.event()`, served by poll and push (and webhook with `events.webhooks`) once one
   * is registered; `false` turns it off. See docs/events.md. @default {}
   */
  events?: EventsOptions | false;
}

/**
 * The server's extensions, each set up from its own option, then those the app added with
 * `addExtension`. Their telemetry is the host's, else built from the handler's `telemetry`
 * option (the same providers as the handler's spans).
 */
export function createExtensions(
  host: ExtensionHost,
  options: ExtensionOptions & { telemetry?: TelemetryOptions | false },
): ServerExtension[] {
  const telemetry = host.telemetry ?? createTelemetry(options.telemetry);
  return [
    tasksExtension({ ...host, telemetry }, options.tasks),
    ...registryExtensions(host.server),
    ...storeExtensions(host, options.events),
    ...addedExtensions({ ...host, telemetry }),
  ];
}

/**
 * The extensions that keep state in the store (events): stdio serves them too, over its own
 * store, with the options it is given.
 */
export function storeExtensions(
  host: EventsHost,
  events: EventsOptions | false | undefined,
): ServerExtension[] {
  const extension = eventsExtension(host, events);
  return extension ? [extension] : [];
}

/**
 * The extensions that need nothing but the server's registrations (skills, apps): stdio serves them
 * as HTTP does.
 */
export function registryExtensions(server: McpServer): ServerExtension[] {
  const owner = server as McpServer<never>;
  return [skillsExtension(owner), appsExtension(owner)];
}
