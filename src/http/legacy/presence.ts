import type { LeaseStore } from "../../store/types.js";
import { toBase64Url } from "../../utils/base64.js";

/**
 * How long a process counts as present after its last renewal. Generous, so a process whose
 * event loop stalls for a moment (a long GC, a busy tick) is not taken for a dead one.
 */
export const PRESENCE_TTL_MS = 15_000;

/** A short random process id: it rides in stream ids, so in every SSE event id. */
function newProcessId(): string {
  return toBase64Url(crypto.getRandomValues(new Uint8Array(9)));
}

/**
 * This process's presence among the processes sharing the store: a lease (`fleet/<id>`) it
 * renews every third of {@link PRESENCE_TTL_MS}, which the others read to tell a live owner of
 * a stream or a server request from a dead one. Never the receiver count of a publish, which
 * on a Redis Cluster counts one node's subscribers only. Taken when this process first owns
 * something another process may ask about, so a process that never does costs nothing.
 */
export class Presence {
  readonly processId = newProcessId();
  readonly #leases: LeaseStore;
  readonly #onError: (error: unknown) => void;
  #started: Promise<void> | undefined;
  #known = false;
  #timer: ReturnType<typeof setInterval> | undefined;

  constructor(leases: LeaseStore, onError: (error: unknown) => void) {
    this.#leases = leases;
    this.#onError = onError;
  }

  /** Resolves once this process is known as present (at once after the first time). */
  ensure(): Promise<void> {
    if (this.#started) return this.#started;
    const started = this.#renew().then(() => {
      // Stopped meanwhile: no renewals.
      if (this.#started !== started) return;
      this.#known = true;
      this.#timer = setInterval(() => void this.#renew().catch(this.#onError), PRESENCE_TTL_MS / 3);
      (this.#timer as { unref?: () => void }).unref?.();
    });
    this.#started = started;
    // A failed first attempt is tried again by the next caller.
    started.catch(() => {
      if (this.#started === started) this.#started = undefined;
    });
    return started;
  }

  /** True once {@link ensure} has made this process known as present (until {@link stop}). */
  get known(): boolean {
    return this.#known;
  }

  /** True while process `processId` keeps its presence (this one always is). */
  async isPresent(processId: string): Promise<boolean> {
    if (processId === this.processId) return true;
    return (await this.#leases.holder(presenceKey(processId))) === processId;
  }

  /** Gives the presence up (shutdown): the others stop waiting for this process at once. */
  async stop(): Promise<void> {
    clearInterval(this.#timer);
    this.#timer = undefined;
    const started = this.#started;
    this.#started = undefined;
    this.#known = false;
    if (started && (await started.then(() => true).catch(() => false)))
      await this.#leases.release(presenceKey(this.processId), this.processId);
  }

  async #renew(): Promise<void> {
    await this.#leases.acquire(presenceKey(this.processId), this.processId, PRESENCE_TTL_MS);
  }
}

function presenceKey(processId: string): string {
  return `fleet/${processId}`;
}
