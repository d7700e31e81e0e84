/** A feed position as both stores give them out: a Redis Stream id, `<ms>-<n>`. */
const SEQ = /^\d{1,15}-\d{1,15}$/;

/** Throws on a position no feed could have given (a forged or damaged cursor). */
export function checkSeq(seq: string): void {
  if (!SEQ.test(seq)) throw new TypeError(`Not a feed position: ${JSON.stringify(seq)}`);
}

/** Throws on a retention that would trim the entry being appended, or nothing ever. */
export function checkRetention(retain: { maxLen: number; maxAgeMs: number }): void {
  if (!Number.isInteger(retain.maxLen) || retain.maxLen < 1)
    throw new TypeError(`A feed's maxLen must be a positive integer, got ${retain.maxLen}`);
  if (!Number.isInteger(retain.maxAgeMs) || retain.maxAgeMs < 1)
    throw new TypeError(`A feed's maxAgeMs must be a positive integer, got ${retain.maxAgeMs}`);
}

/** Throws on a read limit that is not a positive whole number. */
export function checkLimit(limit: number): void {
  if (!Number.isInteger(limit) || limit < 1)
    throw new TypeError(`A feed read's limit must be a positive integer, got ${limit}`);
}
