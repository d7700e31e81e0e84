import { createTelemetry, type TelemetryOptions } from "../../telemetry/telemetry.js";
import type { ExtensionHost, ServerExtension } from "../extension.js";
import type { McpServer } from "../mcp-server.js";
import { appsExtension } from "./apps/index.js";
import { skillsExtension } from "./skills/index.js";
import { type TaskOptions, tasksExtension } from "./tasks/index.js";

/** The built-in extensions' options, part of `createMcpHandler`'s options. */
export interface ExtensionOptions {
  /**
   * The tasks extension (`io.modelcontextprotocol/tasks`): tools with `taskSupport` run as
   * tasks for clients that declare it; `false` turns it off. @default {}
   */
  tasks?: TaskOptions | false;
}

/**
 * The server's extensions, each set up from its own option. Their telemetry is the host's, else
 * built from the handler's `telemetry` option (the same providers as the handler's spans).
 */
export function createExtensions(
  host: ExtensionHost,
  options: ExtensionOptions & { telemetry?: TelemetryOptions | false },
): ServerExtension[] {
  const telemetry = host.telemetry ?? createTelemetry(options.telemetry);
  return [
    tasksExtension({ ...host, telemetry }, options.tasks),
    ...registryExtensions(host.server),
  ];
}

/**
 * The extensions that need nothing but the server's registrations (skills, apps): stdio serves them
 * as HTTP does.
 */
export function registryExtensions(server: McpServer): ServerExtension[] {
  const owner = server as McpServer<never>;
  return [skillsExtension(owner), appsExtension(owner)];
}
