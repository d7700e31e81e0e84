import { channel, publish, subscribe } from "../../../../store/channels.js";
import type { DeliveryJob } from "../../../../store/types.js";
import { type Outcome, recordOutcome } from "./outcome.js";
import { bodyToSend } from "./record.js";
import type { WebhookRuntime } from "./runtime.js";
import { postWebhook } from "./send.js";
import { signedHeaders } from "./sign.js";
import { dropIfAbandoned } from "./terminate.js";

/** Where processes wake each other's workers: deliveries were enqueued or became due. */
const CHANNEL = channel<{ t: "due" }>("events:webhooks");
/** Longest sleep between looks at the queue: a wake-up lost, a dead process's lease run out. */
const MAX_SLEEP_MS = 30_000;
/** First and longest wait before looking again after the queue failed (a store outage). */
const FIRST_BACKOFF_MS = 100;
const MAX_BACKOFF_MS = 5_000;

/** How a worker is doing: delivering, draining (no new claims), or stopped. */
type Phase = "running" | "draining" | "stopped";

/**
 * Delivers the webhook jobs of the shared queue from this process: claims due jobs with a lease
 * longer than a send may take (a process killed mid-delivery leaves its job to be claimed
 * again when the lease ends), POSTs each, and settles it (SEP-3415): done on 2xx; 410 and 413
 * final; otherwise retried on the configured schedule, then abandoned, suspending a
 * subscription that has failed long enough. Sleeps until the next job is due or a wake-up.
 */
export class DeliveryWorker {
  readonly #runtime: WebhookRuntime;
  readonly #inFlight = new Set<Promise<void>>();
  readonly #unsubscribe: Promise<() => Promise<void>>;
  readonly #leaseMs: number;
  #phase: Phase = "running";
  #timer: ReturnType<typeof setTimeout> | undefined;
  #pumping: Promise<void> | undefined;
  #again = false;
  /** Looks at the queue that failed in a row: the next wait doubles with each. */
  #failures = 0;
  /** When a drain began to wait must end (epoch ms). */
  #deadline: number | undefined;

  constructor(runtime: WebhookRuntime) {
    this.#runtime = runtime;
    const { timeoutMs, connectTimeoutMs } = runtime.options;
    this.#leaseMs = 2 * (timeoutMs + connectTimeoutMs) + 5_000;
    this.#unsubscribe = subscribe(runtime.host.store.bus, CHANNEL, () => this.poke());
    this.#unsubscribe.then(() => this.poke(), runtime.host.onError);
  }

  /** Wakes the workers of every process (this one included). */
  wake(): void {
    this.poke();
    publish(this.#runtime.host.store.bus, CHANNEL, { t: "due" }).catch(this.#runtime.host.onError);
  }

  /** Looks at the queue now, unless a look is under way (then once more after it). */
  poke(): void {
    if (this.#phase !== "running") return;
    if (this.#pumping) {
      this.#again = true;
      return;
    }
    this.#pumping = this.#pump()
      .then(
        () => {
          this.#failures = 0;
        },
        (error: unknown) => {
          this.#runtime.host.onError(error);
          // Nothing else may wake this process (no emit, no retry due): look again later.
          this.#sleep(Math.min(MAX_BACKOFF_MS, FIRST_BACKOFF_MS * 2 ** this.#failures++));
        },
      )
      .finally(() => {
        this.#pumping = undefined;
        if (this.#again) {
          this.#again = false;
          this.poke();
        }
      });
  }

  /**
   * Stops claiming; resolves once the deliveries in flight are done, or after `ms`, even while
   * a store call hangs.
   */
  async whenIdle(ms: number): Promise<void> {
    if (this.#phase === "running") this.#phase = "draining";
    clearTimeout(this.#timer);
    this.#deadline = Date.now() + ms;
    await within(this.#settled(), ms);
  }

  /**
   * Stops the worker: no more claims; waits for the deliveries in flight, until the drain's
   * deadline if one began, else for at most a lease (after which another process may send them).
   */
  async close(): Promise<void> {
    this.#phase = "stopped";
    clearTimeout(this.#timer);
    const ms = this.#deadline === undefined ? this.#leaseMs : this.#deadline - Date.now();
    await within(this.#settled(), ms);
    await (await this.#unsubscribe.catch(() => async () => {}))();
  }

  /** Settles once a look under way is done (what it claims is delivered) and every delivery. */
  async #settled(): Promise<void> {
    await this.#pumping;
    await Promise.allSettled([...this.#inFlight]);
  }

  async #pump(): Promise<void> {
    const { deliveries, options } = this.#runtime;
    clearTimeout(this.#timer);
    while (this.#phase === "running") {
      const room = options.concurrency - this.#inFlight.size;
      if (room <= 0) return;
      const jobs = await deliveries.claim(room, this.#leaseMs);
      // Delivered even when a drain began meanwhile: the drain waits for them.
      for (const job of jobs) this.#track(this.#deliver(job));
      if (jobs.length < room) break;
    }
    if (this.#phase !== "running") return;
    const due = await deliveries.nextDue();
    this.#sleep(due === undefined ? MAX_SLEEP_MS : Math.min(MAX_SLEEP_MS, due - Date.now()));
  }

  /** Looks at the queue again after `ms`, unless something wakes the worker first. */
  #sleep(ms: number): void {
    clearTimeout(this.#timer);
    if (this.#phase !== "running") return;
    this.#timer = setTimeout(() => this.poke(), Math.max(0, ms));
    (this.#timer as { unref?: () => void }).unref?.();
  }

  #track(delivery: Promise<void>): void {
    const tracked = delivery.catch(this.#runtime.host.onError).finally(() => {
      this.#inFlight.delete(tracked);
      this.poke();
    });
    this.#inFlight.add(tracked);
  }

  /** One attempt at one job, settled in the queue and on the subscription. */
  async #deliver(job: DeliveryJob): Promise<void> {
    const { webhooks, deliveries, options } = this.#runtime;
    const record = await webhooks.get(job.name, job.subscription);
    // Unsubscribed or lapsed: nothing is owed to it any more.
    if (!record) return deliveries.complete(job.id);
    if (!record.active) {
      if (await dropIfAbandoned(this.#runtime, record, Date.now()))
        return deliveries.complete(job.id);
      // Suspended: the job waits, its attempts and retry window paused, for a refresh.
      return deliveries.retry(job, Date.now() + options.suspendedRecheckMs);
    }
    const body = await bodyToSend(this.#runtime.deliveries, job, record);
    const headers = await signedHeaders(job.webhookId, body, record.secrets, record.id);
    const result = await postWebhook(
      new URL(record.url),
      body,
      headers,
      await this.#runtime.send(),
    );
    const outcome: Outcome = result.ok
      ? { kind: "delivered" }
      : { kind: "failed", reason: result.reason, status: result.status };
    await recordOutcome(this.#runtime, job, record, outcome);
  }
}

/** Resolves when `work` settles or after `ms`, whichever comes first. */
async function within(work: Promise<unknown>, ms: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const elapsed = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, Math.max(0, ms));
  });
  await Promise.race([work.catch(() => undefined), elapsed]);
  clearTimeout(timer);
}
