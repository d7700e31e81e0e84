import type { JsonObject } from "../protocol/messages.js";
import { isObject } from "../protocol/messages.js";
import type { McpServer } from "./mcp-server.js";
import type { AuthInfo } from "./types.js";

/** The issuer-and-subject key that sessions and `requestState` are bound to; "" without auth. */
export function principalKey(auth: AuthInfo | undefined): string {
  return auth ? `${auth.issuer ?? ""}|${auth.subject ?? ""}` : "";
}

/** True when `granted` holds every scope in `needed`. */
export function hasScopes(
  granted: readonly string[],
  needed: readonly string[] | undefined,
): boolean {
  return needed === undefined || needed.every((scope) => granted.includes(scope));
}

/**
 * The scopes a request needs for the tool, prompt or resource it acts on (`scopes` of its
 * registration); undefined when it needs none.
 */
export function scopesFor(
  server: McpServer,
  method: string,
  params: JsonObject,
): readonly string[] | undefined {
  switch (method) {
    case "tools/call":
      return typeof params.name === "string"
        ? server.tools.get(params.name)?.options.scopes
        : undefined;
    case "prompts/get":
      return typeof params.name === "string"
        ? server.prompts.get(params.name)?.options.scopes
        : undefined;
    case "resources/read":
    case "resources/subscribe":
      return typeof params.uri === "string" ? resourceScopes(server, params.uri) : undefined;
    case "completion/complete": {
      const ref = isObject(params.ref) ? params.ref : {};
      if (ref.type === "ref/prompt" && typeof ref.name === "string")
        return server.prompts.get(ref.name)?.options.scopes;
      if (ref.type === "ref/resource" && typeof ref.uri === "string")
        return (
          server.templates.get(ref.uri)?.options.scopes ??
          server.resources.get(ref.uri)?.options.scopes
        );
      return undefined;
    }
    default:
      return undefined;
  }
}

/** The scopes of the resource, or of the first template matching `uri` (the one a read serves). */
function resourceScopes(server: McpServer, uri: string): readonly string[] | undefined {
  const resource = server.resources.get(uri);
  if (resource) return resource.options.scopes;
  for (const template of server.templates.values()) {
    if (template.template.match(uri)) return template.options.scopes;
  }
  return undefined;
}
