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

/** The last value {@link keptText} found, and its text: a server's own `_meta`, on every answer. */
let lastValue: object | undefined;
let lastText: string | undefined;

/** The JSON text kept for `value` by {@link serializedOnce}, if it is such a value. */
export function keptText(value: unknown): string | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  if (value === lastValue) return lastText;
  const text = texts.get(value);
  // Only a kept value is remembered: serializedOnce's terms (frozen, nested values unchanged)
  // keep its text true. It holds on to one such value (a server's `_meta`) until the next.
  if (text !== undefined) {
    lastValue = value;
    lastText = text;
  }
  return text;
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
