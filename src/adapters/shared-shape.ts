/** A property no one else sets: added and deleted again by {@link shareShape}. */
const PROBE = Symbol("mcp-mount.shape");

/**
 * Turns `target` into a dictionary-mode object, whose hidden class V8 shares between all such
 * objects with the same prototype, so that the property accesses that follow, ours and Node's
 * own, hit their inline caches.
 *
 * For `req` and `res` under Express, which gives both a new prototype and then adds properties to
 * them (`next`, `baseUrl`, `originalUrl`, `locals`): V8 then builds hidden classes for each
 * request's objects alone, and every access to them, in our adapter and in Node's `writeHead`,
 * `end` and body stream alike, misses its cache and looks the property up at runtime. A
 * dictionary costs a hash lookup per access instead. Deleting a property V8 cannot simply take
 * back is what makes the dictionary. Not for objects whose hidden class is shared already (plain
 * `node:http`): there it would trade cached loads for lookups.
 *
 * Nothing an ordinary object's users can observe changes: the property is a private symbol, gone
 * before this returns (a Proxy's traps see it come and go).
 */
export function shareShape(target: object): void {
  try {
    if (!Object.isExtensible(target)) return;
    const open = target as Record<symbol, unknown>;
    open[PROBE] = undefined;
    delete open[PROBE];
  } catch {
    // A Proxy whose traps refuse: it stays as it is, and the request is served all the same.
  }
}
