/** JSON texts of frozen values that go out on many messages (a server's `_meta`), kept once. */
const texts = new WeakMap<object, string>();

/**
 * Freezes `value` and keeps its JSON text, which {@link keptText} gives back so that a message
 * carrying the value need not serialise it again. Its nested objects must not change either.
 */
export function serializedOnce<T extends object>(value: T): Readonly<T> {
  texts.set(Object.freeze(value), JSON.stringify(value));
  return value;
}

/** The JSON text kept for `value` by {@link serializedOnce}, if it is such a value. */
export function keptText(value: unknown): string | undefined {
  return typeof value === "object" && value !== null ? texts.get(value) : undefined;
}

/** A deep copy of JSON data (as the wire carries it), frozen all the way down. */
export function frozenJsonCopy<T>(value: T): T {
  return deepFreeze(JSON.parse(JSON.stringify(value)) as T);
}

function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null) {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}
