/**
 * True when `value` nests objects and arrays more than `limit` levels deep (the value itself is
 * level 1). It never descends past `limit`, so input of any depth is measured with a call stack
 * of at most `limit` frames, and allocates nothing.
 */
export function exceedsDepth(value: unknown, limit: number): boolean {
  if (typeof value !== "object" || value === null) return false;
  if (limit <= 0) return true;
  if (Array.isArray(value)) {
    for (const child of value) if (exceedsDepth(child, limit - 1)) return true;
    return false;
  }
  for (const key in value)
    if (exceedsDepth((value as Record<string, unknown>)[key], limit - 1)) return true;
  return false;
}
