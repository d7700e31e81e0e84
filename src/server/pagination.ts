import { invalidParams } from "../protocol/errors.js";

/** One page of a list, with the cursor of the next page when there is one. */
export interface Page<T> {
  items: T[];
  nextCursor?: string;
}

function encodeCursor(offset: number): string {
  return btoa(JSON.stringify({ o: offset })).replace(/=+$/, "");
}

function decodeCursor(cursor: unknown): number {
  if (cursor === undefined) return 0;
  try {
    if (typeof cursor !== "string") throw new Error();
    const offset = (JSON.parse(atob(cursor)) as { o?: unknown }).o;
    if (typeof offset === "number" && Number.isInteger(offset) && offset >= 0) return offset;
  } catch {
    // fall through: any undecodable cursor is the client's error
  }
  throw invalidParams("Invalid cursor");
}

/** Slices `items` at an opaque cursor; an invalid cursor is InvalidParams (spec: pagination). */
export function paginate<T>(items: readonly T[], cursor: unknown, pageSize: number): Page<T> {
  const offset = decodeCursor(cursor);
  const end = offset + pageSize;
  const page: Page<T> = { items: items.slice(offset, end) };
  if (end < items.length) page.nextCursor = encodeCursor(end);
  return page;
}
