import { ErrorCode, McpError } from "../../protocol/errors.js";
import type { JsonObject, RequestId } from "../../protocol/messages.js";
import type { McpServer } from "../../server/mcp-server.js";
import type { McpStore, RateLimiter, RateLimitVerdict } from "../../store/types.js";
import type { Caller } from "../caller.js";
import { nameOf } from "../caller.js";
import { type CostOf, createCostOf, type RateLimitCosts } from "./rate-limit-cost.js";
import { errorResponse } from "../responses.js";
import type { McpHttpResponse } from "../types.js";

/**
 * Options of `createMcpHandler`'s `rateLimit`: a budget of points per window per principal,
 * kept in the store (the memory store, or Redis for one budget across processes).
 *
 * @example
 * ```ts
 * import { createMcpHandler } from "mcp-mount";
 *
 * const mcp = createMcpHandler(server, {
 *   rateLimit: {
 *     points: 100, // per principal per minute
 *     cost: { tools: { generate_report: 10 }, methods: { "tools/list": 0 } },
 *   },
 * });
 * server.tool({ name: "summarize" }, async (_args, ctx) => {
 *   const tokens = 1_200; // known only once the work is done
 *   await ctx.charge(Math.ceil(tokens / 100)); // throws the rate-limit error when over
 *   return "summary";
 * });
 * ```
 */
export interface RateLimitOptions {
  /** Points each principal (else client id, else client address) may spend per window. */
  points: number;
  /** The window in milliseconds: a whole number of seconds. @default 60_000 */
  windowMs?: number;
  /**
   * What each JSON-RPC request costs: a table (by tool, prompt, resource, method), or a function
   * returning a whole number of points (0: free). Notifications and responses are free.
   * @default 1 point per request
   */
  cost?: RateLimitCosts | CostOf;
  /**
   * Serve requests while the limiter's store cannot be reached (Redis down), unlimited, rather
   * than answer 503 with Retry-After. @default false
   */
  failOpen?: boolean;
  /**
   * Points of a caller's budget each process spends locally before settling with the store in
   * batches, so a charge costs no Redis round trip; the budget may then be overrun by up to
   * N × `share` points per window across N processes. 0 charges the store on every request,
   * exactly. A store in one process's memory is exact either way. @default 0
   */
  share?: number;
}

/** The one policy the endpoint advertises (draft-ietf-httpapi-ratelimit-headers §3). */
const POLICY = '"default"';

/** What a charge decided: serve the request (with these headers), or this answer instead. */
export type Charge =
  | { serve: true; headers: Record<string, string> | undefined }
  | { serve: false; response: McpHttpResponse };

/** Charges requests to their principal's budget, kept where the store keeps sessions. */
export class RateLimit {
  readonly #costOf: CostOf;
  readonly #limiter: Promise<RateLimiter>;
  /** The limiter once made: charges skip awaiting its promise. */
  #made: RateLimiter | undefined;
  readonly #failOpen: boolean;
  readonly #policy: string;
  readonly #onError: (error: unknown) => void;

  constructor(
    options: RateLimitOptions,
    server: McpServer,
    store: McpStore,
    onError: (error: unknown) => void,
  ) {
    const { points } = options;
    const windowMs = options.windowMs ?? 60_000;
    if (!Number.isInteger(points) || points < 1)
      throw new TypeError(`rateLimit.points must be a whole number >= 1, got ${points}`);
    if (!Number.isInteger(windowMs / 1000) || windowMs < 1000)
      throw new TypeError(`rateLimit.windowMs must be a whole number of seconds, got ${windowMs}`);
    const share = options.share ?? 0;
    if (!Number.isInteger(share) || share < 0 || share > points)
      throw new TypeError(`rateLimit.share must be a whole number from 0 to points, got ${share}`);
    if (!store.rateLimiter)
      throw new TypeError("rateLimit needs a store with rateLimiter() (memoryStore, redisStore)");
    this.#costOf = createCostOf(server, options.cost);
    this.#failOpen = options.failOpen ?? false;
    this.#onError = onError;
    this.#policy = `${POLICY};q=${points};w=${windowMs / 1000}`;
    this.#limiter = store.rateLimiter(
      share > 0 ? { points, windowMs, share } : { points, windowMs },
    );
    this.#limiter.then(
      (limiter) => {
        this.#made = limiter;
      },
      (error: unknown) => {
        // Every request will fail on it: say why once, where an operator looks.
        console.error(`mcp-mount: ${error instanceof Error ? error.message : String(error)}`);
      },
    );
  }

  /**
   * Charges one JSON-RPC request to `client` (undefined: a caller nobody can tell apart, charged
   * to one shared budget). Rejects when the limiter could not be made (configuration).
   */
  async charge(
    client: string | undefined,
    message: { id: RequestId; method: string; params?: JsonObject },
    caller: Caller,
  ): Promise<Charge> {
    const params = message.params ?? {};
    const cost = this.#costOf({
      method: message.method,
      name: nameOf(params),
      params,
      auth: caller.auth,
      app: caller.app,
    });
    if (cost === 0) return { serve: true, headers: undefined };
    const limiter = this.#made ?? (await this.#limiter);
    let verdict: RateLimitVerdict;
    try {
      verdict = await limiter.consume(client ?? "anonymous", cost);
    } catch (error) {
      this.#onError(error);
      if (this.#failOpen) return { serve: true, headers: undefined };
      return { serve: false, response: limiterDown(message.id) };
    }
    const headers = this.#headers(verdict);
    if (verdict.allowed) return { serve: true, headers };
    return { serve: false, response: overBudget(verdict, headers, message.id) };
  }

  /**
   * Charges `points` more to `client` while its request runs (`ctx.charge`): resolves when they
   * fit (or the store is down with `failOpen`), throws the rate-limit error when they do not, or
   * a retryable one when the store cannot be reached.
   */
  async chargeMore(client: string | undefined, points: number): Promise<void> {
    if (!Number.isInteger(points) || points < 0)
      throw new TypeError(`ctx.charge: points must be a whole number >= 0, got ${points}`);
    if (points === 0) return;
    const limiter = this.#made ?? (await this.#limiter);
    let verdict: RateLimitVerdict;
    try {
      verdict = await limiter.consume(client ?? "anonymous", points);
    } catch (error) {
      this.#onError(error);
      if (this.#failOpen) return;
      throw storeDownError();
    }
    if (!verdict.allowed) throw rateLimitedError(verdict);
  }

  /** `RateLimit-Policy` and `RateLimit` (draft-ietf-httpapi-ratelimit-headers-11 §3, §4). */
  #headers(verdict: RateLimitVerdict): Record<string, string> {
    const left = secondsOf(verdict.resetMs);
    return {
      "ratelimit-policy": this.#policy,
      ratelimit: `${POLICY};r=${verdict.remaining};t=${left}`,
    };
  }
}

/** Whole seconds, rounded up, at least 1: a client that waits that long finds the window over. */
function secondsOf(ms: number): number {
  return Math.max(1, Math.ceil(ms / 1000));
}

/** The JSON-RPC error of a request over its budget; `data.retryAfter` in seconds. */
function rateLimitedError(verdict: RateLimitVerdict): McpError {
  const retryAfter = secondsOf(verdict.resetMs);
  return new McpError(ErrorCode.RateLimited, `Rate limit exceeded; retry in ${retryAfter} s`, {
    retryAfter,
  });
}

/** The JSON-RPC error while the limiter's store cannot be reached. */
function storeDownError(): McpError {
  return new McpError(ErrorCode.InternalError, "Rate limit store unavailable, retry shortly");
}

/** 429 with Retry-After (the window's end, as the draft's §6 asks) and a JSON-RPC error. */
function overBudget(
  verdict: RateLimitVerdict,
  headers: Record<string, string>,
  id: RequestId,
): McpHttpResponse {
  const retryAfter = String(secondsOf(verdict.resetMs));
  return errorResponse(429, rateLimitedError(verdict), {
    id,
    headers: { ...headers, "retry-after": retryAfter },
  });
}

/** 503 while the limiter's store cannot be reached, as for the session store. */
function limiterDown(id: RequestId): McpHttpResponse {
  return errorResponse(503, storeDownError(), { id, headers: { "retry-after": "1" } });
}

/**
 * The response with the charge's headers added: a copy (responses may share header objects), but
 * for a stream's, made afresh per request, whose body must stay unread (see `sseResponse`).
 */
export function withBudgetHeaders(
  response: McpHttpResponse,
  headers: Record<string, string> | undefined,
): McpHttpResponse {
  if (!headers) return response;
  if (response.sse) {
    response.headers = { ...response.headers, ...headers };
    return response;
  }
  return {
    status: response.status,
    headers: { ...response.headers, ...headers },
    body: response.body,
  };
}
