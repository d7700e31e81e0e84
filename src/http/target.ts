import type { McpHttpRequest } from "./types.js";

/**
 * What the path checks every request passes read: the request's target where the host gives it
 * in origin form (`/path?query`, no URL to build), else its URL.
 */
export function targetOf(req: McpHttpRequest): string {
  const { target } = req;
  return target?.startsWith("/") ? target : req.url;
}

/**
 * The path of what {@link targetOf} gave: a target is read on the request's own origin, as the
 * URL built from it is (so one starting with `//` stays a path, and names no host).
 */
export function pathnameOf(targetOrUrl: string): string {
  const url = targetOrUrl.startsWith("/") ? `http://localhost${targetOrUrl}` : targetOrUrl;
  return new URL(url).pathname;
}
