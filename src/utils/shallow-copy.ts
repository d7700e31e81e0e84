/**
 * A copy of `value`'s own enumerable properties, as `{ ...value }` makes, that stays cheap to
 * extend. On Node 20 (V8 11.3) each property added to an object made by spread costs about a
 * microsecond (the clone's map has no transitions to reuse), and every result gains
 * `resultType` and `_meta` on its way out: a spread there was a fifth of a request's own cost.
 */
export function shallowCopy<T extends object>(value: T): { [K in keyof T]: T[K] } {
  const copy: Record<string, unknown> = {};
  const source = value as Record<string, unknown>;
  for (const key of Object.keys(source)) {
    // Assigning "__proto__" would set the copy's prototype rather than copy the property.
    if (key === "__proto__") {
      Object.defineProperty(copy, key, {
        value: source[key],
        enumerable: true,
        writable: true,
        configurable: true,
      });
    } else copy[key] = source[key];
  }
  return copy as { [K in keyof T]: T[K] };
}
