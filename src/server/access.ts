import type { JsonObject } from "../protocol/messages.js";
import { isObject } from "../protocol/messages.js";
import type { McpServer } from "./mcp-server.js";
import type { AuthInfo } from "./types.js";

/**
 * The issuer-and-subject key that sessions, tasks and `requestState` are bound to; "" without
 * auth. A principal without a subject is its client (as `jwtAuth` reads client-credentials
 * tokens); one with neither is refused when it is authenticated (`isIdentified`).
 */
export function principalKey(auth: AuthInfo | undefined): string {
  return auth ? `${auth.issuer ?? ""}|${auth.subject || auth.clientId || ""}` : "";
}

/** True when a principal names someone: a subject or a client id (not empty). */
export function isIdentified(auth: AuthInfo): boolean {
  return Boolean(auth.subject || auth.clientId);
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
    case "subscriptions/listen":
      return listenScopes(server, params);
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

/**
 * The scopes of every resource a listen request subscribes to: its updates tell what a read
 * would, so they need what `resources/subscribe` of each URI needs.
 */
function listenScopes(server: McpServer, params: JsonObject): readonly string[] | undefined {
  const uris = isObject(params.notifications) ? params.notifications.resourceSubscriptions : [];
  if (!Array.isArray(uris)) return undefined;
  const needed = new Set<string>();
  for (const uri of uris) {
    if (typeof uri !== "string") continue;
    for (const scope of resourceScopes(server, uri) ?? []) needed.add(scope);
  }
  return needed.size > 0 ? [...needed] : undefined;
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
