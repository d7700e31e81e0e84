/**
 * JSON with object keys sorted, so equal values always serialise the same way. Throws a
 * RangeError for values nested more than `maxDepth` levels, rather than overflowing the stack.
 */
export function canonicalJson(value: unknown, maxDepth = 64): string {
  const write = (node: unknown, depth: number): string => {
    if (node === null || typeof node !== "object") return JSON.stringify(node) ?? "null";
    if (depth > maxDepth) throw new RangeError(`JSON nests more than ${maxDepth} levels deep`);
    if (Array.isArray(node)) return `[${node.map((item) => write(item, depth + 1)).join(",")}]`;
    const entries = Object.entries(node as Record<string, unknown>)
      .filter(([, item]) => item !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${write(item, depth + 1)}`).join(",")}}`;
  };
  return write(value, 1);
}
