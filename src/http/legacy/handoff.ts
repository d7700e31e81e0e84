import { publish, subscribe } from "../../store/channels.js";
import type { McpStore } from "../../store/types.js";
import type { EndpointServices } from "../endpoint-services.js";
import { type Handoff, LegacyChannels, type SessionMessage } from "./channels.js";
import type { HeldSession, RemoteEvent } from "./held-session.js";
import { getStreamKey } from "./session-leases.js";
import type { Sessions } from "./sessions.js";
import { fromStore } from "./store-outage.js";
import type { LegacyStream } from "./stream.js";

/**
 * How long the lease on a session's GET stream lasts unless renewed; the holder renews it every
 * third of that while it holds the stream, so a dead holder's lease lapses on its own.
 */
const GET_LEASE_MS = 300_000;

/** How often a takeover checks whether the old holder of a GET stream let go of its lease. */
const LEASE_POLL_MS = 100;

/** Longest wait for another process to take a GET stream over on shutdown. */
const HANDOFF_WAIT_MS = 1_000;
/**
 * Longest wait for the old holder of a GET stream to say it let go. Generous: stopping early
 * means both processes deliver for a moment, and the client hears a change twice.
 */
const TAKEOVER_WAIT_MS = 3_000;

/**
 * Moves a session's GET stream between processes: a process shutting down offers the streams it
 * holds and another adopts each; a client resuming a stream on another process takes it over.
 * Either way the old holder lets go and says when every event it sent is logged, so the new one
 * numbers its events after them and nothing is lost or repeated.
 */
export class StreamHandoffs {
  readonly #core: EndpointServices;
  readonly #store: McpStore;
  readonly #sessions: Sessions;
  readonly #retryMs: number;
  /** Takeovers waiting for the old holder of a GET stream to let go, by stream id. */
  readonly #released = new Map<string, (seq: number | undefined) => void>();
  readonly #offers: Promise<() => Promise<void>>;
  readonly #renewal: ReturnType<typeof setInterval>;

  constructor(core: EndpointServices, store: McpStore, sessions: Sessions, retryMs: number) {
    this.#core = core;
    this.#store = store;
    this.#sessions = sessions;
    this.#retryMs = retryMs;
    this.#renewal = setInterval(() => this.#renewLeases(), GET_LEASE_MS / 3);
    (this.#renewal as { unref?: () => void }).unref?.();
    this.#offers = subscribe(store.bus, LegacyChannels.handoff, (handoff) => {
      this.#adopt(handoff).catch((error: unknown) => core.reportError(error));
    });
    this.#offers.catch((error: unknown) => core.reportError(error));
  }

  /** Acts on what another process said of a held session: it took or released a GET stream. */
  onRemote(held: HeldSession, event: RemoteEvent): void {
    const { processId } = this.#sessions;
    if (event.t === "end") this.#sessions.drop(held.sessionId, "Session deleted");
    else if (event.t === "released" && event.by !== processId)
      this.#released.get(event.stream)?.(event.seq);
    else if (event.t === "take" && event.by !== processId && held.standalone) this.#letGo(held);
  }

  /** Another process takes the GET stream: close it here, and say when its events are logged. */
  #letGo(held: HeldSession): void {
    const standalone = this.#sessions.letGoOfStandalone(held)!;
    standalone.detach(this.#retryMs);
    // The taker reads the log next: tell it once every event this process sent is there.
    void standalone.flushed().then(() =>
      this.#sessions.publish(held.sessionId, {
        t: "released",
        stream: standalone.id,
        seq: standalone.seq,
        by: this.#sessions.processId,
      }),
    );
  }

  /**
   * Records that this process holds the session's GET stream now (a lease in the store), and
   * resolves with the other process that held it before, if any. A lease, not who answers on
   * the bus: a publish's receiver count says nothing about the fleet on a Redis Cluster.
   */
  async claim(sessionId: string): Promise<string | undefined> {
    const { leases } = this.#store;
    const self = this.#sessions.processId;
    const key = getStreamKey(sessionId);
    await this.#sessions.presence.ensure();
    const previous = await leases.holder(key);
    if (previous !== undefined && previous !== self) await leases.release(key, previous);
    await leases.acquire(key, self, GET_LEASE_MS);
    return previous === self ? undefined : previous;
  }

  /**
   * A new GET stream of a session opened here: takes its lease, then reads the session's
   * resource subscriptions again. A `resources/subscribe` on another process tells the lease's
   * holder, so one made before the lease was taken here is in the record read after it; then
   * the process that held the stream before lets go.
   */
  async claimNew(held: HeldSession, standalone: LegacyStream): Promise<void> {
    const previous = await this.claim(held.sessionId);
    const record = await fromStore(this.#store.sessions.get(held.sessionId));
    if (record) held.setSubscriptions(record.subscriptions);
    if (previous === undefined) return;
    const by = this.#sessions.processId;
    await this.#sessions.publish(held.sessionId, { t: "take", stream: standalone.id, by });
  }

  /** Offers every GET stream held here to the other processes, then closes them (a drain). */
  async offerAll(): Promise<void> {
    const held = this.#sessions.allHeld();
    await Promise.all(held.map((session) => this.#offer(session).catch(() => undefined)));
    for (const session of held) {
      const standalone = session.standalone;
      if (!standalone) continue;
      standalone.detach(this.#retryMs);
      this.#sessions.letGoOfStandalone(session);
    }
  }

  /** Stops hearing offers (shutdown). */
  async close(): Promise<void> {
    clearInterval(this.#renewal);
    await (await this.#offers.catch(() => async () => {}))();
  }

  /** Renews the leases of the GET streams held here. */
  #renewLeases(): void {
    const self = this.#sessions.processId;
    for (const held of this.#sessions.allHeld()) {
      if (!held.standalone) continue;
      this.#store.leases
        .renew(getStreamKey(held.sessionId), self, GET_LEASE_MS)
        .catch((error: unknown) => this.#core.reportError(error));
    }
  }

  /** Offers a session's GET stream to the other processes; resolves once one took it. */
  async #offer(held: HeldSession): Promise<void> {
    const standalone = held.standalone;
    if (!standalone || standalone.ended) return;
    let stopListening = () => {};
    const taken = new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, HANDOFF_WAIT_MS);
      stopListening = held.onRemote((event) => {
        if (event.t !== "take" || event.by === this.#sessions.processId) return;
        clearTimeout(timer);
        resolve();
      });
    });
    const handoff: Handoff = {
      session: held.sessionId,
      stream: standalone.id,
      seq: standalone.seq,
      from: this.#sessions.processId,
    };
    await publish(this.#store.bus, LegacyChannels.handoff, handoff);
    // Another process adopts the stream, and says so, if there is one; an in-process store
    // (no epoch) means there is none.
    if (this.#store.bus.epoch) await taken;
    stopListening();
  }

  /** Takes over a GET stream a process shutting down offered; one process wins the claim. */
  async #adopt(handoff: Handoff): Promise<void> {
    if (handoff.from === this.#sessions.processId || this.#sessions.draining) return;
    const key = `handoff:${handoff.session}/${handoff.stream}.${handoff.seq}`;
    if (!(await this.#store.nonces.claim(key, 60_000))) return;
    const record = await fromStore(this.#store.sessions.get(handoff.session));
    if (!record) return;
    const held = this.#sessions.hold(record);
    const standalone = held.openStandalone(handoff.stream);
    standalone.continueFrom(handoff.seq);
    await held.listen();
    // Changes from now on are kept, unnumbered, until the old holder has let go.
    standalone.hold();
    this.#sessions.connectChanges(held);
    const seq = await this.takeOver(record.id, standalone);
    // Events sent by the old holder after its offer are in the log: go on after them.
    if (seq !== undefined) standalone.continueFrom(seq);
    standalone.release();
    this.#sessions.awaitResumption(held, standalone);
  }

  /**
   * Asks whichever process holds a GET stream to let go of it, and waits (briefly: there may be
   * none) until it says every event it sent is logged. Resolves with its last event's counter.
   */
  async takeOver(sessionId: string, standalone: LegacyStream): Promise<number | undefined> {
    const released = new Promise<number | undefined>((resolve) => {
      const timer = setTimeout(() => done(undefined), TAKEOVER_WAIT_MS);
      const done = (seq: number | undefined) => {
        clearTimeout(timer);
        if (this.#released.get(standalone.id) === done) this.#released.delete(standalone.id);
        resolve(seq);
      };
      this.#released.set(standalone.id, done);
    });
    const nobody = () => this.#released.get(standalone.id)?.(undefined);
    const { leases } = this.#store;
    const key = getStreamKey(sessionId);
    const self = this.#sessions.processId;
    try {
      await this.#sessions.held(sessionId)?.listen();
      await this.#sessions.presence.ensure();
      const previous = await leases.holder(key);
      // No other holder, or one that is gone: nobody will say it let go.
      if (previous === undefined || previous === self) nobody();
      else if (!(await this.#sessions.presence.isPresent(previous))) nobody();
      else {
        const message: SessionMessage = { t: "take", stream: standalone.id, by: self };
        await publish(this.#store.bus, LegacyChannels.session(sessionId), message);
        // It says so, or (having let go already, before this asked) its lease is gone.
        void this.#untilLeaseLeft(key, previous, released).then(nobody);
      }
      const seq = await released;
      if (previous !== undefined && previous !== self) await leases.release(key, previous);
      await leases.acquire(key, self, GET_LEASE_MS);
      return seq;
    } catch (error) {
      this.#core.reportError(error);
      nobody();
      return released;
    }
  }

  /** Resolves once `holder` no longer holds the lease `key`, or `settled` settles. */
  async #untilLeaseLeft(key: string, holder: string, settled: Promise<unknown>): Promise<void> {
    let done = false;
    void settled.then(() => {
      done = true;
    });
    while (!done) {
      await new Promise((resolve) => setTimeout(resolve, LEASE_POLL_MS));
      if (done) return;
      if ((await this.#store.leases.holder(key).catch(() => holder)) !== holder) return;
    }
  }
}
