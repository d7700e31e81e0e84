import type { JsonObject } from "../protocol/messages.js";
import { type CacheHints, cacheHintsOf } from "./cache.js";

/** Pages followed at most, against a server whose cursors never end. */
const MAX_PAGES = 100;

/** Follows `nextCursor` through every page of a list method. */
export async function listAll(
  fetchPage: (params: JsonObject) => Promise<JsonObject>,
  field: string,
): Promise<{ items: JsonObject[]; hints: CacheHints | undefined }> {
  const items: JsonObject[] = [];
  const pages: JsonObject[] = [];
  let cursor: string | undefined;
  do {
    const page = await fetchPage(cursor === undefined ? {} : { cursor });
    pages.push(page);
    const list = page[field];
    if (Array.isArray(list)) items.push(...(list as JsonObject[]));
    cursor = typeof page.nextCursor === "string" ? page.nextCursor : undefined;
  } while (cursor !== undefined && pages.length < MAX_PAGES);
  return { items, hints: cacheHintsOf(pages) };
}
