import type { McpClient } from "../client/client.js";
import type { Subscription } from "../client/listen.js";
import type { ListenFilter, Notification } from "../client/types.js";
import { isObject, type JsonObject } from "../protocol/messages.js";
import type { McpServer, Registration } from "../server/mcp-server.js";
import { type Forwarding, KINDS, type Kind, listOf, register } from "./mirror-entries.js";

/** A mirrored entry: what the upstream listed (as JSON, to compare) and its registration. */
interface Entry {
  listed: string;
  registration: Registration;
}

/** The lists a change notification makes stale. */
const STALE: Record<string, Kind[]> = {
  "notifications/tools/list_changed": ["tools"],
  "notifications/prompts/list_changed": ["prompts"],
  "notifications/resources/list_changed": ["resources", "templates"],
};

/** The upstream connection being mirrored and what it is listened to with. */
interface Source {
  client: McpClient;
  subscriptions: Subscription[];
}

/**
 * Keeps a server's tools, prompts, resources and templates those of the upstream: each list
 * is read again when the upstream says it changed, and only entries that changed are
 * registered again (so clients hear of a change only when there is one). Resources are
 * subscribed to upstream, and their updates announced downstream.
 */
export class Mirror {
  readonly #server: McpServer;
  readonly #via: Forwarding;
  readonly #onError: (error: unknown) => void;
  readonly #entries: Record<Kind, Map<string, Entry>> = {
    tools: new Map(),
    prompts: new Map(),
    resources: new Map(),
    templates: new Map(),
  };
  /** Each list's refresh in progress, and whether another is due after it. */
  readonly #refreshing = new Map<Kind, { done: Promise<void>; again: boolean }>();
  readonly #attached = new WeakSet<McpClient>();
  #source: Source | undefined;
  #updates: Subscription | undefined;
  #subscribed = "";

  constructor(server: McpServer, via: Forwarding, onError: (error: unknown) => void) {
    this.#server = server;
    this.#via = via;
    this.#onError = onError;
  }

  /** The upstream connection mirrored now. */
  get client(): McpClient | undefined {
    return this.#source?.client;
  }

  /**
   * Mirrors `client` from now on (once per client): reads every list, then listens for changes.
   * A connection that replaces another (a restart) is listened to instead of it.
   */
  async attach(client: McpClient): Promise<void> {
    if (this.#attached.has(client)) return;
    this.#attached.add(client);
    this.#stopListening();
    const source: Source = { client, subscriptions: [] };
    this.#source = source;
    // Listening before reading: a change announced while the lists are read is heard, and the
    // list read again, where one announced between the reading and the listening was lost.
    this.#listen(client);
    await this.#acknowledged(source);
    if (this.#source !== source) return;
    const kinds = Object.keys(KINDS) as Kind[];
    await Promise.all(kinds.filter((kind) => this.#offers(kind)).map((k) => this.refresh(k)));
    this.#clear(kinds.filter((kind) => !this.#offers(kind)));
    // Once attached, every change the upstream announces is heard (resource updates too).
    if (this.#source === source) await this.#acknowledged(source);
  }

  /** Resolves once the upstream acknowledged each subscription of `source` (or refused it). */
  async #acknowledged(source: Source): Promise<void> {
    await Promise.all(source.subscriptions.map((sub) => sub.acknowledged.catch(() => {})));
  }

  /** Reads one list again and applies the difference; a refresh asked for meanwhile runs after. */
  refresh(kind: Kind): Promise<void> {
    const running = this.#refreshing.get(kind);
    if (running) {
      running.again = true;
      return running.done;
    }
    const state = { done: Promise.resolve(), again: false };
    state.done = (async () => {
      do {
        state.again = false;
        await this.#refreshOnce(kind).catch(this.#onError);
      } while (state.again);
      this.#refreshing.delete(kind);
      if (kind === "resources") this.#subscribeResources();
    })();
    this.#refreshing.set(kind, state);
    return state.done;
  }

  /** Stops listening to the upstream; what is registered stays. */
  close(): void {
    this.#stopListening();
    this.#source = undefined;
  }

  async #refreshOnce(kind: Kind): Promise<void> {
    const client = this.#source?.client;
    if (!client) return;
    const listed = await listOf(client, kind);
    if (this.#source?.client !== client) return;
    const entries = this.#entries[kind];
    const seen = new Set<string>();
    for (const item of listed) {
      const key = item[KINDS[kind]];
      if (typeof key !== "string" || seen.has(key)) continue;
      seen.add(key);
      const json = JSON.stringify(item);
      const entry = entries.get(key);
      if (entry?.listed === json) continue;
      entry?.registration.remove();
      entries.delete(key);
      try {
        entries.set(key, {
          listed: json,
          registration: register(this.#server, kind, item, this.#via),
        });
      } catch (error) {
        this.#onError(new Error(`Upstream ${kind} entry ${key} not mirrored`, { cause: error }));
      }
    }
    for (const [key, entry] of entries) {
      if (seen.has(key)) continue;
      entry.registration.remove();
      entries.delete(key);
    }
  }

  /** Whether the mirrored upstream declares `kind` (templates are part of resources). */
  #offers(kind: Kind): boolean {
    const capability = kind === "templates" ? "resources" : kind;
    return isObject(this.#source?.client.server.capabilities[capability]);
  }

  #clear(kinds: Kind[]): void {
    for (const kind of kinds) {
      for (const entry of this.#entries[kind].values()) entry.registration.remove();
      this.#entries[kind].clear();
    }
  }

  /** Listens for the list changes the upstream announces. */
  #listen(client: McpClient): void {
    const capabilities = client.server.capabilities;
    const announces = (name: string) => {
      const capability = capabilities[name];
      return isObject(capability) && capability.listChanged === true;
    };
    const filter: ListenFilter = {};
    if (announces("tools")) filter.toolsListChanged = true;
    if (announces("prompts")) filter.promptsListChanged = true;
    if (announces("resources")) filter.resourcesListChanged = true;
    if (Object.keys(filter).length > 0) this.#follow(client.listen(filter));
  }

  /**
   * Subscribes to every listed resource upstream, when it offers subscriptions, so updates
   * reach the clients subscribed here; again whenever the resource list changed.
   */
  #subscribeResources(): void {
    const source = this.#source;
    const resources = source?.client.server.capabilities.resources;
    if (!source || !isObject(resources) || resources.subscribe !== true) return;
    const uris = [...this.#entries.resources.keys()].sort();
    const key = JSON.stringify(uris);
    if (key === this.#subscribed && this.#updates) return;
    this.#updates?.close();
    this.#updates = undefined;
    this.#subscribed = key;
    if (uris.length === 0) return;
    this.#updates = this.#follow(source.client.listen({ resourceSubscriptions: uris }));
  }

  #follow(subscription: Subscription): Subscription {
    this.#source?.subscriptions.push(subscription);
    subscription.acknowledged.catch(this.#onError);
    void (async () => {
      for await (const notification of subscription) this.#hear(notification);
    })().catch(this.#onError);
    return subscription;
  }

  #hear(notification: Notification): void {
    if (notification.method === "notifications/resources/updated") {
      const uri = notification.params?.uri;
      if (typeof uri === "string") this.#server.notifyResourceUpdated(uri);
      return;
    }
    for (const kind of STALE[notification.method] ?? []) void this.refresh(kind);
  }

  #stopListening(): void {
    for (const subscription of this.#source?.subscriptions ?? []) subscription.close();
    this.#updates = undefined;
    this.#subscribed = "";
  }
}

/** The upstream's capabilities as this server declares them: the kinds it offers, and kept in sync. */
export function mirroredCapabilities(upstream: JsonObject): JsonObject {
  const capabilities: JsonObject = {};
  if (isObject(upstream.tools)) capabilities.tools = { listChanged: true };
  if (isObject(upstream.prompts)) capabilities.prompts = { listChanged: true };
  if (isObject(upstream.resources)) {
    capabilities.resources = {
      subscribe: upstream.resources.subscribe === true,
      listChanged: true,
    };
  }
  if (isObject(upstream.logging)) capabilities.logging = {};
  if (isObject(upstream.completions)) capabilities.completions = {};
  return capabilities;
}
