const GONE: unique symbol = Symbol("gone");

/**
 * A Map for keys that leave and come back all the time (a session's entry, taken and let go of
 * on every request). V8 gives a Map a new table when deletions leave it sparse and when an
 * entry is added after deletions, and a long-lived Map's tables are allocated in old space,
 * where only a full collection frees them. Here a deletion only marks its entry, and adding the
 * key again reuses it; marked entries are swept out once they outnumber the live ones (and a
 * floor), so they never cost more than the live entries do.
 */
export class ChurnMap<K, V> {
  #map = new Map<K, V | typeof GONE>();
  #gone = 0;
  readonly #floor: number;

  /** `floor`: how many marked entries are kept at least before a sweep. */
  constructor(floor = 32) {
    this.#floor = floor;
  }

  /** Deleted entries still marked in the map, awaiting a sweep. */
  get marked(): number {
    return this.#gone;
  }

  /** Live entries. */
  get size(): number {
    return this.#map.size - this.#gone;
  }

  get(key: K): V | undefined {
    const value = this.#map.get(key);
    return value === GONE ? undefined : value;
  }

  has(key: K): boolean {
    const value = this.#map.get(key);
    return value !== GONE && (value !== undefined || this.#map.has(key));
  }

  set(key: K, value: V): this {
    if (this.#map.get(key) === GONE) this.#gone--;
    this.#map.set(key, value);
    return this;
  }

  /** Removes the key's entry; false when it had none. */
  delete(key: K): boolean {
    const map = this.#map;
    const value = map.get(key);
    if (value === GONE || (value === undefined && !map.has(key))) return false;
    map.set(key, GONE);
    this.#gone++;
    if (this.#gone > this.#floor && this.#gone > map.size - this.#gone) this.#sweep();
    return true;
  }

  /** The live keys, as an array: safe to change the map while walking it. */
  keys(): K[] {
    const keys: K[] = [];
    for (const [key, value] of this.#map) if (value !== GONE) keys.push(key);
    return keys;
  }

  /** The live values, as an array: safe to change the map while walking it. */
  values(): V[] {
    const values: V[] = [];
    for (const value of this.#map.values()) if (value !== GONE) values.push(value);
    return values;
  }

  #sweep(): void {
    const live = new Map<K, V | typeof GONE>();
    for (const [key, value] of this.#map) if (value !== GONE) live.set(key, value);
    this.#map = live;
    this.#gone = 0;
  }
}
