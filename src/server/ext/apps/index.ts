import {
  APP_MIME_TYPE,
  APPS_EXTENSION,
  type AppToolLink,
  LEGACY_RESOURCE_URI_KEY,
} from "../../../protocol/apps.js";
import type { JsonObject } from "../../../protocol/messages.js";
import type { ServerExtension } from "../../extension.js";
import type { McpServer, Registration } from "../../mcp-server.js";
import type { HandlerContext } from "../../types.js";

/** Where an app's view may connect and load from (its Content Security Policy). */
export interface AppCsp {
  /** Origins for fetch, XHR and WebSocket (`connect-src`). */
  connectDomains?: string[];
  /** Origins for scripts, styles, images, fonts and media. */
  resourceDomains?: string[];
  /** Origins of nested iframes (`frame-src`). */
  frameDomains?: string[];
  /** Allowed `base-uri`s. */
  baseUriDomains?: string[];
}

/** What an app's view asks of its host: `_meta.ui` of its resource (SEP-1865). */
export interface AppResourceMeta {
  csp?: AppCsp;
  /** Browser permissions the view would like (hosts may refuse). */
  permissions?: { camera?: {}; microphone?: {}; geolocation?: {}; clipboardWrite?: {} };
  /** A dedicated sandbox origin, in the host's own format. */
  domain?: string;
  /** Whether the view wants the host's border and background. */
  prefersBorder?: boolean;
}

/** Options of {@link registerAppResource}. */
export interface AppResourceOptions<App = unknown> {
  /** A `ui://` URI. */
  uri: string;
  name: string;
  title?: string;
  description?: string;
  /** The view: one HTML document with its scripts and styles inline. */
  html: string | ((ctx: HandlerContext<App>) => string | Promise<string>);
  /** Its CSP, permissions, domain and border preference. */
  ui?: AppResourceMeta;
}

const apps = new WeakMap<McpServer<never>, Set<string>>();

/**
 * Registers an app's view (MCP Apps, SEP-1865): a `ui://` resource served as
 * `text/html;profile=mcp-app` with its `_meta.ui` (in the listing and in what `resources/read`
 * returns). Link tools to it with {@link appToolMeta}. The server then declares the extension,
 * in both eras and on stdio.
 *
 * @example
 * ```ts
 * import { appToolMeta, McpServer, registerAppResource } from "mcp-mount";
 *
 * const server = new McpServer({ name: "clock", version: "1.0.0" });
 * registerAppResource(server, {
 *   uri: "ui://clock/view.html",
 *   name: "clock",
 *   html: "<!doctype html><p>The time is shown here.</p>",
 *   ui: { prefersBorder: true },
 * });
 * server.tool(
 *   { name: "time", _meta: appToolMeta({ resourceUri: "ui://clock/view.html" }) },
 *   () => new Date().toISOString(),
 * );
 * ```
 */
export function registerAppResource<App>(
  server: McpServer<App>,
  options: AppResourceOptions<App>,
): Registration {
  if (!options.uri.startsWith("ui://"))
    throw new TypeError(`An app's URI is ui://: ${options.uri}`);
  const meta: JsonObject | undefined = options.ui ? { ui: options.ui } : undefined;
  const { html } = options;
  const registration = server.resource(
    {
      uri: options.uri,
      name: options.name,
      ...(options.title ? { title: options.title } : {}),
      ...(options.description ? { description: options.description } : {}),
      mimeType: APP_MIME_TYPE,
      ...(meta ? { _meta: meta } : {}),
    },
    async (uri, ctx) => ({
      uri,
      mimeType: APP_MIME_TYPE,
      text: typeof html === "string" ? html : await html(ctx),
      ...(meta ? { _meta: meta } : {}),
    }),
  );
  const owner = server as unknown as McpServer<never>;
  const uris = apps.get(owner) ?? new Set<string>();
  uris.add(options.uri);
  apps.set(owner, uris);
  return {
    remove: () => {
      uris.delete(options.uri);
      registration.remove();
    },
  };
}

/**
 * The `_meta` of a tool linked to an app: `ui.resourceUri` (and the flat key older hosts read)
 * and `ui.visibility` (`["app"]`: only the app calls it, hosts keep it from the model).
 *
 * @example
 * ```ts
 * import { appToolMeta } from "mcp-mount";
 *
 * server.tool(
 *   { name: "refresh", _meta: appToolMeta({ resourceUri: "ui://clock/view.html", visibility: ["app"] }) },
 *   () => "refreshed",
 * );
 * ```
 */
export function appToolMeta(
  link: AppToolLink & { resourceUri: string },
  meta: JsonObject = {},
): JsonObject {
  const ui: JsonObject = { resourceUri: link.resourceUri };
  if (link.visibility) ui.visibility = [...link.visibility];
  return { ...meta, ui, [LEGACY_RESOURCE_URI_KEY]: link.resourceUri };
}

/**
 * The MCP Apps extension (`io.modelcontextprotocol/ui`): declared with the MIME type it serves
 * once an app is registered. It serves no method: hosts read the views with `resources/read`
 * and call tools with `tools/call`. Lists do not depend on who asks (PROTOCOL §2.2), so app-only
 * tools stay in `tools/list`; hosts keep them from the model.
 */
export function appsExtension(server: McpServer<never>): ServerExtension {
  return {
    id: APPS_EXTENSION,
    legacy: true,
    get declaration() {
      return (apps.get(server)?.size ?? 0) > 0 ? { mimeTypes: [APP_MIME_TYPE] } : undefined;
    },
  };
}
