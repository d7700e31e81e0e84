import type { JsonObject, JsonRpcErrorResponse, JsonRpcResult } from "../../protocol/messages.js";
import { publish } from "../../store/channels.js";
import type { McpStore, SessionRecord } from "../../store/types.js";
import { ChurnMap } from "../../utils/churn-map.js";
import type { EndpointServices } from "../endpoint-services.js";
import { AwaitingStreams } from "./awaiting-streams.js";
import { LegacyChannels, type SessionMessage } from "./channels.js";
import { markCancelled } from "./early-cancel.js";
import { HeldSession, type HeldSessionOptions, type RemoteEvent } from "./held-session.js";
import { Presence } from "./presence.js";
import { type RemoteContext, routeReply, tellHolder } from "./remote-session.js";
import { SessionActivity } from "./session-activity.js";
import { SessionCache } from "./session-cache.js";
import { type Found, type SessionRead, SessionReads } from "./session-reads.js";
import { newSessionRecord } from "./session-record.js";
import { fromStore } from "./store-outage.js";
import type { LegacyStream } from "./stream.js";
import type { LegacySettings } from "./types.js";

/**
 * The legacy sessions as this process sees them: their records (in the store, read through a
 * short-lived cache) and what it holds for some of them ({@link HeldSession}: streams, waits,
 * running requests). Messages for a session held elsewhere travel on the session's bus channel.
 */
export class Sessions {
  /** This process among those sharing the store: its id and its presence there. */
  readonly presence: Presence;
  readonly #core: EndpointServices;
  readonly #remote: RemoteContext;
  readonly #store: McpStore;
  readonly #settings: LegacySettings;
  /** Taken and let go of on every request: a map that keeps no garbage tables. */
  readonly #held = new ChurnMap<string, HeldSession>();
  /** The change sinks of the GET streams held here, by session: their removal. */
  readonly #sinks = new Map<string, () => void>();
  readonly #cache: SessionCache;
  readonly #reads: SessionReads;
  /** This process's marks on the sessions it is busy with. */
  readonly #activity: SessionActivity;
  readonly #onRemote: (held: HeldSession, event: RemoteEvent) => void;
  /** GET streams whose client left, awaiting a resumption. */
  readonly #awaiting: AwaitingStreams;
  #draining = false;
  #heldOptions: HeldSessionOptions | undefined;

  constructor(
    core: EndpointServices,
    store: McpStore,
    settings: LegacySettings,
    onRemote: (held: HeldSession, event: RemoteEvent) => void,
  ) {
    this.#core = core;
    this.#store = store;
    this.#settings = settings;
    this.#onRemote = onRemote;
    this.presence = new Presence(store.leases, (error) => core.reportError(error));
    this.#remote = { store, presence: this.presence, onError: (error) => core.reportError(error) };
    this.#activity = new SessionActivity(
      store.sessions,
      this.processId,
      (id) => this.#held.has(id),
      (error) => core.reportError(error),
    );
    this.#awaiting = new AwaitingStreams({
      windowMs: settings.resumeWindowMs,
      capacity: core.slots.capacity,
      perClient: core.slots.perClient,
      forget: (sessionId, standalone) => this.#forget(sessionId, standalone),
    });
    this.#cache = new SessionCache(
      store.sessions,
      store.bus,
      Math.min(settings.maxSessions, 10_000),
      (error) => core.reportError(error),
    );
    this.#reads = new SessionReads(this.#cache, this.#activity, this.presence);
  }

  /** This process, for telling its own bus messages from others'. */
  get processId(): string {
    return this.presence.processId;
  }

  /** True once a drain began: nothing new starts, GET streams are handed over. */
  get draining(): boolean {
    return this.#draining;
  }

  /** Begins the drain: GET streams whose client left stop waiting for it. */
  startDraining(): void {
    this.#draining = true;
    this.#awaiting.clear();
  }

  /** Sessions this process holds state for. */
  get heldCount(): number {
    return this.#held.size;
  }

  /** Every session held here now. */
  allHeld(): HeldSession[] {
    return this.#held.values();
  }

  /**
   * The session a request names, when it belongs to the request's principal; the request's
   * `client` makes it that client's most recently used. A request that will `hold` the session
   * (`holds`) marks it active in the same read, and must call {@link hold} once found.
   */
  find(sessionId: string, principal: string, request?: SessionRead): Found {
    return this.#reads.find(sessionId, principal, request);
  }

  /** Opens a session for an `initialize`; returns its id. */
  async open(
    params: JsonObject,
    protocolVersion: string,
    principal: string,
    client: string | undefined,
  ): Promise<string> {
    const record = newSessionRecord(params, protocolVersion, principal, client);
    const evicted = await fromStore(
      this.#store.sessions.create(record, this.#settings.maxSessions),
    );
    if (evicted.length > 0) await fromStore(this.#cache.changed(...evicted));
    return record.id;
  }

  /** Ends a session everywhere; false when the store did not have it. */
  async end(sessionId: string, reason: string): Promise<boolean> {
    if (!(await fromStore(this.#store.sessions.delete(sessionId)))) return false;
    // Gone from the store already: a cache that stays stale a few seconds only serves a 404 late.
    await this.#cache.changed(sessionId).catch((error: unknown) => this.#core.reportError(error));
    this.drop(sessionId, reason);
    void this.publish(sessionId, { t: "end" });
    return true;
  }

  /** Stores a change of a session's record, and has every process read it again. */
  async update(
    sessionId: string,
    change: Partial<Pick<SessionRecord, "logLevel" | "subscriptions">>,
  ): Promise<void> {
    await fromStore(this.#store.sessions.update(sessionId, change));
    if (change.subscriptions) {
      this.#held.get(sessionId)?.setSubscriptions(change.subscriptions);
      await fromStore(tellHolder(this.#remote, sessionId, change.subscriptions));
    }
    await fromStore(this.#cache.changed(sessionId));
  }

  /** What this process holds for a session, created on first need. */
  hold(record: SessionRecord): HeldSession {
    let held = this.#held.get(record.id);
    this.#activity.held(record.id, !held);
    if (held) return held;
    // One options object for every held session: an idle GET stream's session costs less.
    this.#heldOptions ??= {
      log: this.#store.events,
      bus: this.#store.bus,
      processId: this.processId,
      leases: this.#store.leases,
      present: () => this.presence.ensure(),
      requestTimeoutMs: this.#settings.requestTimeoutMs,
      onError: (error) => this.#core.reportError(error),
      // One listener for every session, not one made on each hold.
      onRemote: this.#onRemote,
    };
    held = new HeldSession(record.id, record.subscriptions, this.#heldOptions);
    this.#held.set(record.id, held);
    return held;
  }

  /** What this process holds for a session, if anything. */
  held(sessionId: string): HeldSession | undefined {
    return this.#held.get(sessionId);
  }

  /** Lets go of a held session once nothing needs it. */
  release(held: HeldSession): void {
    if (!held.idle || this.#held.get(held.sessionId) !== held) return;
    this.#held.delete(held.sessionId);
    this.#activity.released(held.sessionId);
    held.close("released");
  }

  /** Ends what this process holds for a session (its requests, streams and waits). */
  drop(sessionId: string, reason: string): void {
    this.#awaiting.stop(sessionId);
    this.#held.get(sessionId)?.close(reason);
    if (this.#held.delete(sessionId)) this.#activity.released(sessionId);
    this.disconnectChanges(sessionId);
  }

  /** Delivers list changes and resource updates to the session's GET stream held here. */
  connectChanges(held: HeldSession): void {
    if (!this.#sinks.has(held.sessionId))
      this.#sinks.set(held.sessionId, this.#core.hub.add(held.sink()));
  }

  /** Stops delivering changes to the session's GET stream here. */
  disconnectChanges(sessionId: string): void {
    this.#sinks.get(sessionId)?.();
    this.#sinks.delete(sessionId);
  }

  /** Tells the other processes; resolves once Redis (or the memory bus) took the message. */
  publish(sessionId: string, message: SessionMessage): Promise<void> {
    return publish(this.#store.bus, LegacyChannels.session(sessionId), message).then(
      () => undefined,
      (error: unknown) => this.#core.reportError(error),
    );
  }

  /** Answers a server request here, or through the bus on the process that sent it. */
  routeReply(sessionId: string, reply: JsonRpcResult | JsonRpcErrorResponse): Promise<boolean> {
    return fromStore(routeReply(this.#remote, this.#held.get(sessionId), sessionId, reply));
  }

  /** Cancels a client request of the session, here or on the process running it. */
  cancel(sessionId: string, requestId: string): void {
    if (this.#held.get(sessionId)?.cancel(requestId)) return;
    // Kept in the store first, for a running process not yet listening (see early-cancel.ts).
    markCancelled(this.#store.leases, this.processId, sessionId, requestId)
      .catch((error: unknown) => this.#core.reportError(error))
      .then(() => this.publish(sessionId, { t: "cancel", requestId }));
  }

  /** The client left the session's GET stream: it waits for a resumption (see {@link AwaitingStreams}). */
  awaitResumption(held: HeldSession, standalone: LegacyStream, client?: string): void {
    if (this.#draining || standalone.attached || standalone.ended) return;
    if (held.standalone !== standalone) return;
    this.#awaiting.add(held.sessionId, standalone, client);
  }

  /** The session's GET stream no longer waits for a resumption (resumed, or taken over). */
  stopAwaiting(sessionId: string): void {
    this.#awaiting.stop(sessionId);
  }

  /** Lets go of the session's GET stream here: handed over, taken over, or forgotten. */
  letGoOfStandalone(held: HeldSession): LegacyStream | undefined {
    this.#awaiting.stop(held.sessionId);
    const standalone = held.takeStandalone();
    this.disconnectChanges(held.sessionId);
    this.release(held);
    return standalone;
  }

  /**
   * Drops GET streams whose client left and whose session has since expired: a session held for
   * a resumption that can no longer come. Other held sessions end with their requests.
   */
  async sweep(): Promise<void> {
    for (const held of this.allHeld()) {
      if (!held.onlyAwaitingResumption) continue;
      try {
        if (!(await this.#store.sessions.exists(held.sessionId)))
          this.drop(held.sessionId, "Session expired");
      } catch (error) {
        this.#core.reportError(error);
      }
    }
  }

  /** Lets go of a GET stream whose client did not come back. */
  #forget(sessionId: string, standalone: LegacyStream): void {
    this.#awaiting.stop(sessionId);
    const held = this.#held.get(sessionId);
    if (!held || held.standalone !== standalone || standalone.attached) return;
    this.letGoOfStandalone(held);
  }

  /** Ends every session held here (shutdown); the sessions themselves live on. */
  async close(reason: string): Promise<void> {
    for (const sessionId of this.#held.keys()) this.drop(sessionId, reason);
    await this.#cache.close();
    await this.presence.stop().catch((error: unknown) => this.#core.reportError(error));
  }
}
