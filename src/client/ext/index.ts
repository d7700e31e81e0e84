import type { ClientExtension } from "../extension.js";
import type { McpClientOptions } from "../options.js";
import { EventsExtension } from "./events/index.js";
import { SkillsExtension } from "./skills/index.js";
import { TasksExtension } from "./tasks/index.js";

/**
 * The extensions every client carries, in the order they are asked about a result; each
 * reads the client's options to decide whether it is on. A new extension adds a line here.
 */
export function clientExtensions(options: McpClientOptions): ClientExtension[] {
  return [new TasksExtension(options), new SkillsExtension(), new EventsExtension()];
}
