import type { RateLimiter, RateLimitPolicy, RateLimitVerdict } from "./types.js";

/** Points to add to one window's counts: one amount per key. */
export interface WindowBatch {
  /** The window's number: `floor(time / windowMs)`. */
  window: number;
  /** How long the window's counts must be kept, from now. */
  ttlMs: number;
  keys: string[];
  amounts: number[];
}

/** Where a batched limiter keeps the counts every process adds to (Redis). */
export interface SharedCounts {
  /** Adds every amount to its key's count in its window; resolves to the totals, batch by batch. */
  add(batches: WindowBatch[]): Promise<number[][]>;
  /** Adds `points` to `key` in `window` only if its total stays within `limit`. */
  addWithin(batch: {
    window: number;
    ttlMs: number;
    key: string;
    points: number;
    limit: number;
  }): Promise<{ added: boolean; total: number }>;
}

/** One key's points in one window, as this process knows them. */
interface Tally {
  /** The shared total when last heard from the store. */
  known: number;
  /** Points on their way to the store. */
  sent: number;
  /** Points spent here and not yet sent. */
  pending: number;
}

/** How often points left below the threshold are settled anyway, at most. */
const SETTLE_EVERY_MS = 1_000;

const ignore = () => undefined;

/**
 * A limiter that spends from a local share of each key's budget and settles with the shared
 * count in batches, so a charge costs no round trip while the key's unsettled points stay within
 * `share`. A charge is refused only when the points known here (the shared total last heard, plus
 * those not yet settled) leave too little, so a refusal is never wrong; what may go over is what
 * other processes spent and have not settled yet: under `share` each, so at most N × `share`
 * points over the budget per window across N processes. Windows are aligned to the clock (every
 * `windowMs` since the epoch), so every process agrees where one ends without asking. While the
 * store cannot be reached every charge goes to it at once, failing as an exact limiter does.
 */
export class BatchedRateLimiter implements RateLimiter {
  readonly #points: number;
  readonly #windowMs: number;
  readonly #share: number;
  readonly #counts: SharedCounts;
  readonly #now: () => number;
  readonly #windows = new Map<number, Map<string, Tally>>();
  readonly #timer: ReturnType<typeof setInterval>;
  /** Points spent here that no settle has taken yet. */
  #unsettled = 0;
  #reachable = true;
  #closed = false;
  #settling: Promise<void> | undefined;
  #queued: Promise<void> | undefined;

  constructor(policy: RateLimitPolicy, counts: SharedCounts, now: () => number = Date.now) {
    this.#points = policy.points;
    this.#windowMs = policy.windowMs;
    this.#share = policy.share ?? 1;
    this.#counts = counts;
    this.#now = now;
    this.#timer = setInterval(
      () => {
        if (this.#unsettled > 0) this.#settle().catch(ignore);
      },
      Math.min(SETTLE_EVERY_MS, this.#windowMs / 4),
    );
    (this.#timer as { unref?: () => void }).unref?.();
  }

  consume(key: string, points: number): Promise<RateLimitVerdict> {
    // Dearer than a share, or the store unheard of: the store decides, as an exact limiter would.
    if (!this.#reachable || this.#closed || points > this.#share)
      return this.#chargeNow(key, points);
    const now = this.#now();
    const window = Math.floor(now / this.#windowMs);
    const tally = this.#tally(window, key);
    const spent = tally.known + tally.sent + tally.pending;
    const resetMs = (window + 1) * this.#windowMs - now;
    if (spent + points > this.#points)
      return Promise.resolve({
        allowed: false,
        remaining: Math.max(0, this.#points - spent),
        resetMs,
      });
    // The share is spent until the store has heard of it: wait for that, then decide again.
    if (tally.sent + tally.pending + points > this.#share)
      return this.#settle().then(() => this.consume(key, points));
    tally.pending += points;
    this.#unsettled += points;
    // Half the share spent: settle now, so the other half covers the round trip.
    if (tally.pending * 2 >= this.#share) this.#settle().catch(ignore);
    return Promise.resolve({ allowed: true, remaining: this.#points - spent - points, resetMs });
  }

  /** Settles every point spent here, then charges in the store directly from now on. */
  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#timer);
    while (this.#unsettled > 0 || this.#settling) await this.#settle();
  }

  /**
   * Charges the store at once, within what it and this process know of the key: settles first,
   * so the store's total holds what was spent here, and is the probe while it was unreachable.
   */
  async #chargeNow(key: string, points: number): Promise<RateLimitVerdict> {
    await this.#settle();
    const now = this.#now();
    const window = Math.floor(now / this.#windowMs);
    const tally = this.#tally(window, key);
    const local = tally.sent + tally.pending;
    let outcome: { added: boolean; total: number };
    try {
      const ttlMs = this.#ttlOf(window, now);
      const limit = this.#points - local;
      outcome = await this.#counts.addWithin({ window, ttlMs, key, points, limit });
    } catch (error) {
      this.#reachable = false;
      throw error;
    }
    this.#reachable = true;
    tally.known = Math.max(tally.known, outcome.total);
    const remaining = Math.max(0, this.#points - outcome.total - local);
    return { allowed: outcome.added, remaining, resetMs: (window + 1) * this.#windowMs - now };
  }

  /** One settle at a time; a settle asked for meanwhile runs once the current one is done. */
  #settle(): Promise<void> {
    if (!this.#settling) {
      this.#settling = this.#send().finally(() => {
        this.#settling = undefined;
      });
      return this.#settling;
    }
    this.#queued ??= this.#settling.catch(ignore).then(() => {
      this.#queued = undefined;
      return this.#settle();
    });
    return this.#queued;
  }

  /** Sends every pending point in one round trip, and learns each key's shared total. */
  async #send(): Promise<void> {
    const now = this.#now();
    const { batches, taken } = this.#takePending(Math.floor(now / this.#windowMs), now);
    if (batches.length === 0) return;
    let totals: number[];
    try {
      totals = (await this.#counts.add(batches)).flat();
    } catch (error) {
      // Kept for the next settle: spent points are never dropped from the shared count.
      for (const { tally, amount } of taken) {
        tally.sent -= amount;
        tally.pending += amount;
        this.#unsettled += amount;
      }
      this.#reachable = false;
      throw error;
    }
    this.#reachable = true;
    taken.forEach(({ tally, amount }, i) => {
      tally.sent -= amount;
      tally.known = Math.max(tally.known, totals[i] ?? 0);
    });
    this.#forgetPast(Math.floor(this.#now() / this.#windowMs));
  }

  /**
   * Moves pending points to sent, as one batch per window (a window over for a whole window is
   * dropped: nobody counts it any more); `taken` lists them in the batches' order.
   */
  #takePending(current: number, now: number) {
    const batches: WindowBatch[] = [];
    const taken: { tally: Tally; amount: number }[] = [];
    for (const [window, keys] of this.#windows) {
      const batch: WindowBatch = { window, ttlMs: this.#ttlOf(window, now), keys: [], amounts: [] };
      for (const [key, tally] of keys) {
        const amount = tally.pending;
        if (amount === 0) continue;
        this.#unsettled -= amount;
        tally.pending = 0;
        if (window < current - 1) continue;
        tally.sent += amount;
        batch.keys.push(key);
        batch.amounts.push(amount);
        taken.push({ tally, amount });
      }
      if (batch.keys.length > 0) batches.push(batch);
    }
    return { batches, taken };
  }

  /** Drops what this process knew of windows that are over and have nothing left to settle. */
  #forgetPast(current: number): void {
    for (const [window, keys] of this.#windows) {
      if (window >= current) continue;
      for (const [key, tally] of keys)
        if (tally.pending === 0 && tally.sent === 0) keys.delete(key);
      if (keys.size === 0) this.#windows.delete(window);
    }
  }

  #tally(window: number, key: string): Tally {
    let keys = this.#windows.get(window);
    if (!keys) {
      keys = new Map();
      this.#windows.set(window, keys);
      this.#forgetPast(window);
    }
    let tally = keys.get(key);
    if (!tally) {
      tally = { known: 0, sent: 0, pending: 0 };
      keys.set(key, tally);
    }
    return tally;
  }

  /** A window's counts are kept one window past its end, for settles that arrive late. */
  #ttlOf(window: number, now: number): number {
    return Math.max(1, (window + 2) * this.#windowMs - now);
  }
}
