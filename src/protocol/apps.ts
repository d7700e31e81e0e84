import { isObject, type JsonObject } from "./messages.js";

/** The MCP Apps extension's identifier, negotiated in `capabilities.extensions` (SEP-1865). */
export const APPS_EXTENSION = "io.modelcontextprotocol/ui";

/** The MIME type of an app's HTML resource (`ui://`). */
export const APP_MIME_TYPE = "text/html;profile=mcp-app";

/** The flat `_meta` key older hosts read a tool's UI resource from (deprecated form). */
export const LEGACY_RESOURCE_URI_KEY = "ui/resourceUri";

/** Who may call a tool: the model, the app (its view, through the host), or both. */
export type AppToolVisibility = "model" | "app";

/** A tool's `_meta.ui`: the app it opens and who may call it. */
export interface AppToolLink {
  /** The `ui://` resource the host renders for the tool. */
  resourceUri?: string;
  /** @default ["model", "app"] */
  visibility?: AppToolVisibility[];
}

/** A tool's link to its app, read from `_meta.ui` (or the flat legacy key). */
export function appLinkOf(meta: unknown): AppToolLink | undefined {
  if (!isObject(meta)) return undefined;
  const ui = isObject(meta.ui) ? meta.ui : {};
  const link: AppToolLink = {};
  const uri = typeof ui.resourceUri === "string" ? ui.resourceUri : meta[LEGACY_RESOURCE_URI_KEY];
  if (typeof uri === "string") link.resourceUri = uri;
  if (Array.isArray(ui.visibility)) {
    link.visibility = ui.visibility.filter(
      (who): who is AppToolVisibility => who === "model" || who === "app",
    );
  } else if (ui.visibility !== undefined) {
    // Malformed: shown to no one rather than to the model by default (fail closed).
    link.visibility = [];
  }
  return link.resourceUri !== undefined || link.visibility !== undefined ? link : undefined;
}

/** Whether a model may see and call the tool: its visibility (default both) includes "model". */
export function isModelVisible(meta: JsonObject | undefined): boolean {
  const visibility = appLinkOf(meta)?.visibility;
  return visibility === undefined || visibility.includes("model");
}
