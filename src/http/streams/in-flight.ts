import { ErrorCode, McpError } from "../../protocol/errors.js";
import { LinkedList } from "../../utils/linked-list.js";

/**
 * The error a request still running when a drain's grace ends is answered with: the work was
 * not done, and the same request may be sent again (elsewhere: this process is going away).
 */
export function shutdownError(): McpError {
  return new McpError(ErrorCode.InternalError, "Server is shutting down; retry the request", {
    retryable: true,
  });
}

/**
 * The requests this process is running, so a drain can wait for them and then end the rest:
 * each registers how to end itself with {@link shutdownError} when the grace is over.
 */
export class InFlight {
  readonly #ends = new LinkedList<() => void>();
  #idle: (() => void) | undefined;

  /** Requests running now. */
  get size(): number {
    return this.#ends.size;
  }

  /** Registers a running request; call the returned function (once or more) when it has answered. */
  begin(end: () => void): () => void {
    const link = this.#ends.add(end);
    return () => {
      if (this.#ends.remove(link) && this.#ends.size === 0) this.#idle?.();
    };
  }

  /**
   * Waits until every request has answered or `graceMs` passed; then ends those still running
   * and waits (briefly) for them to write their answers.
   */
  async settle(graceMs: number): Promise<void> {
    if (this.#ends.size > 0) await this.#whenIdle(graceMs);
    for (const end of this.#ends.values()) {
      try {
        end();
      } catch {
        // One request failing to answer must not keep the drain from finishing.
      }
    }
    if (this.#ends.size > 0) await this.#whenIdle(1_000);
  }

  #whenIdle(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.#idle = done;
    }).finally(() => {
      this.#idle = undefined;
    });
  }
}
