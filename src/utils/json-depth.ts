/**
 * True when `value` nests objects and arrays more than `limit` levels deep (the value itself is
 * level 1). Iterative, so input of any depth is measured without growing the call stack.
 */
export function exceedsDepth(value: unknown, limit: number): boolean {
  if (typeof value !== "object" || value === null) return false;
  const nodes: object[] = [value];
  const depths: number[] = [1];
  while (nodes.length > 0) {
    const node = nodes.pop()!;
    const depth = depths.pop()!;
    if (depth > limit) return true;
    for (const child of Array.isArray(node) ? node : Object.values(node)) {
      if (typeof child === "object" && child !== null) {
        nodes.push(child);
        depths.push(depth + 1);
      }
    }
  }
  return false;
}
