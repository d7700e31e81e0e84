import { invalidParams, type McpError } from "../protocol/errors.js";
import type { JsonObject } from "../protocol/messages.js";
import { isObject } from "../protocol/messages.js";
import { paramsDepthError } from "../protocol/params.js";
import { LEGACY_VERSIONS } from "../protocol/versions.js";
import { declarationsOf, type ServerExtension } from "./extension.js";
import type { McpServer } from "./mcp-server.js";

/**
 * What is wrong with an `initialize` request's params, if anything: InitializeRequestParams
 * (schema 2025-11-25) requires a string `protocolVersion`, object `capabilities` and a
 * `clientInfo` with string `name` and `version`; and they are stored with the session, so
 * they are bounded like any params.
 */
export function initializeParamsError(params: JsonObject): McpError | undefined {
  const tooDeep = paramsDepthError(params);
  if (tooDeep) return tooDeep;
  const { protocolVersion, capabilities, clientInfo } = params;
  const problems = [
    (typeof protocolVersion !== "string" || protocolVersion === "") &&
      "protocolVersion must be a non-empty string",
    !isObject(capabilities) && "capabilities must be an object",
    !(isObject(clientInfo) && typeof clientInfo.name === "string") &&
      "clientInfo must be an object with a string name",
    !(isObject(clientInfo) && typeof clientInfo.version === "string") &&
      "clientInfo must have a string version",
  ].filter((problem) => problem !== false);
  return problems.length > 0
    ? invalidParams(`Invalid initialize params: ${problems.join("; ")}`)
    : undefined;
}

/** The version a legacy session speaks: the client's when served, else our latest (spec: lifecycle). */
export function negotiateVersion(
  requested: unknown,
  served: readonly string[] = LEGACY_VERSIONS,
): string {
  return typeof requested === "string" && served.includes(requested)
    ? requested
    : LEGACY_VERSIONS[0]!;
}

/**
 * The result of `initialize` in `protocolVersion`, the same on HTTP and stdio; `extensions` that
 * serve legacy sessions are declared in its `capabilities.extensions`.
 */
export function initializeResult(
  server: McpServer,
  protocolVersion: string,
  extensions: readonly ServerExtension[] = [],
): JsonObject {
  const capabilities = server.capabilities();
  const declared = declarationsOf(extensions, "legacy");
  if (declared) capabilities.extensions = declared;
  const result: JsonObject = { protocolVersion, capabilities, serverInfo: server.info };
  if (server.instructions !== undefined) result.instructions = server.instructions;
  return result;
}
