/**
 * Where everything lives. A session's keys share the hash tag `{s:<id>}`, so on Redis Cluster
 * they sit in one slot and each operation on them is one single-slot command or script; its
 * sharded channels carry the same tag, so they live on the node that owns its keys.
 */
export function keyLayout(prefix: string) {
  /** `key` is `<scope>/<name>`: the scope (a session id) chooses the slot. */
  const scoped = (key: string, kind: string) => {
    const slash = key.indexOf("/");
    if (slash === -1) return `${prefix}{s:${key}}:${kind}`;
    return `${prefix}{s:${key.slice(0, slash)}}:${kind}:${key.slice(slash + 1)}`;
  };
  return {
    session: (id: string) => `${prefix}{s:${id}}:rec`,
    /** Set of the owners (process ids) marking the session as in use. */
    active: (id: string) => `${prefix}{s:${id}}:active`,
    /** Sorted set of live session ids by last use, for `maxSessions`. */
    sessionIndex: `${prefix}sessions`,
    /**
     * Sorted set of a client's session ids by last use, for `maxSessionsPerClient`: one key in
     * one slot per client. A client with `}` in its name ends the tag early, which changes its
     * slot only, not which key is its own.
     */
    clientSessions: (client: string) => `${prefix}{c:${client}}:sessions`,
    /** `stream` is `<sessionId>/<streamId>`. */
    log: (stream: string) => scoped(stream, "log"),
    /** `key` is `<sessionId>/<name>`. */
    lease: (key: string) => scoped(key, "lease"),
    nonce: (key: string) => `${prefix}nonce:${key}`,
    /**
     * An event type's keys (Events extension) share the tag `{ev:<name>}`: its feed (a Stream),
     * the newest position trimmed from it, its dedup keys, its webhook subscriptions and their
     * index, so that appending and subscribing are single-slot scripts.
     */
    feed: (name: string) => `${prefix}{ev:${name}}:feed`,
    feedTrimmed: (name: string) => `${prefix}{ev:${name}}:trimmed`,
    feedDedup: (name: string, key: string) => `${prefix}{ev:${name}}:dedup:${key}`,
    webhook: (name: string, id: string) => `${prefix}{ev:${name}}:hook:${id}`,
    /** Sorted set of an event type's subscription ids by expiry (+inf for none). */
    webhooks: (name: string) => `${prefix}{ev:${name}}:hooks`,
    /** Deliveries owed: ids by due time, and their jobs; one slot (see redis-deliveries.ts). */
    deliveriesDue: `${prefix}{deliveries}:due`,
    deliveryJobs: `${prefix}{deliveries}:jobs`,
    /** Feed positions owed, per subscription (sorted by text), and each job's entry there. */
    deliveriesOwed: `${prefix}{deliveries}:owed`,
    deliveryOwedBy: `${prefix}{deliveries}:owed-by`,
    /** Each claimed job's latest claim token. */
    deliveryClaims: `${prefix}{deliveries}:claims`,
    /** A bus channel: fleet-wide without a shard, else in the shard's (session's) slot. */
    channel: (name: string, shard: string | undefined) =>
      shard === undefined ? `${prefix}${name}` : `${prefix}{s:${shard}}:${name}`,
  };
}

/** The keys of one store. */
export type Keys = ReturnType<typeof keyLayout>;

/**
 * The part of a key Redis Cluster hashes: what is inside its first `{…}` when not empty, else
 * the whole key. Keys with one tag share a slot (keys with different tags may too).
 */
export function hashTag(key: string): string {
  const open = key.indexOf("{");
  const close = open === -1 ? -1 : key.indexOf("}", open + 1);
  return close > open + 1 ? key.slice(open + 1, close) : key;
}
