import type { McpServer } from "mcp-mount";
import { registerClientRequestFixtures } from "./fixtures/client-requests.js";
import { registerDiagnosticFixtures } from "./fixtures/diagnostics.js";
import { registerInputRequiredFixtures } from "./fixtures/input-required.js";
import { registerPromptFixtures } from "./fixtures/prompts.js";
import { registerResourceFixtures } from "./fixtures/resources.js";
import { registerSkillFixtures } from "./fixtures/skills.js";
import { registerTaskFixtures } from "./fixtures/tasks.js";
import { registerToolFixtures } from "./fixtures/tools.js";

/**
 * Registers every fixture the official conformance suite (@modelcontextprotocol/conformance)
 * calls by name. Order matters: scenarios call the first listed tool and read the first listed
 * resource.
 */
export async function registerConformanceFixtures(server: McpServer): Promise<McpServer> {
  registerToolFixtures(server);
  registerClientRequestFixtures(server);
  registerDiagnosticFixtures(server);
  registerInputRequiredFixtures(server);
  registerPromptFixtures(server);
  registerResourceFixtures(server);
  registerTaskFixtures(server);
  await registerSkillFixtures(server);
  return server;
}
