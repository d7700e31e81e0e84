import type { JsonObject } from "../protocol/messages.js";
import { type CacheHints, type CacheSlot, hintsOf, ResultCache } from "./cache.js";
import { endpointKey } from "./connect.js";
import { HttpWire } from "./http-wire.js";
import type { McpClientOptions } from "./options.js";
import { listAll } from "./pages.js";
import type { Notification, RequestOptions } from "./types.js";
import type { Wire } from "./wire.js";

/**
 * One client's share of a {@link ResultCache}: its entries live under its endpoint and
 * context, and its list and read results are kept for their `ttlMs`.
 */
export class ClientCache {
  readonly #cache: ResultCache | undefined;
  readonly #slot: CacheSlot;

  constructor(options: McpClientOptions, wire: Wire) {
    this.#cache =
      options.cache === false
        ? undefined
        : options.cache instanceof ResultCache
          ? options.cache
          : new ResultCache();
    // Transports without a URL get a key of their own: their servers share nothing.
    const own = crypto.randomUUID();
    this.#slot = {
      endpoint: wire instanceof HttpWire ? endpointKey(wire.url) : own,
      context: options.cacheContext ?? own,
    };
  }

  /** Every page of a list method, from the cache unless `fresh` or stale. */
  async list(
    method: string,
    field: string,
    options: RequestOptions,
    request: (params: JsonObject) => Promise<JsonObject>,
  ): Promise<JsonObject[]> {
    const cached = this.#get(method, options);
    if (cached) return cached as JsonObject[];
    const { items, hints } = await listAll(request, field);
    this.#set(method, items, hints);
    return items;
  }

  /** A `resources/read` result, from the cache unless `fresh` or stale. */
  async read(
    uri: string,
    options: RequestOptions,
    request: () => Promise<JsonObject>,
  ): Promise<JsonObject> {
    const key = `resources/read ${uri}`;
    const cached = this.#get(key, options);
    if (cached) return cached as JsonObject;
    const result = await request();
    this.#set(key, result, hintsOf(result));
    return result;
  }

  /** Drops what a change notification from this client's server makes stale. */
  invalidate(notification: Notification): void {
    this.#cache?.invalidate(this.#slot.endpoint, notification);
  }

  #get(key: string, options: RequestOptions): unknown {
    return options.fresh ? undefined : this.#cache?.get(this.#slot, key);
  }

  #set(key: string, value: unknown, hints: CacheHints | undefined): void {
    this.#cache?.set(this.#slot, key, value, hints);
  }
}
