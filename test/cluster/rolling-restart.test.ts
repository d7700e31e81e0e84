import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PRESENCE_TTL_MS } from "../../src/http/legacy/presence.js";
import {
  type Cluster,
  FIXTURE_SERVER,
  type RedisTopology,
  servedBy,
  startCluster,
} from "../helpers/cluster.js";
import { legacyHeaders, openSession } from "../helpers/legacy.js";
import { modernHeaders, modernMeta, parseSse, viaUrl } from "../helpers/modern.js";
import { assertLegacyMessage, assertModernMessage } from "../helpers/spec.js";
import { SseReader } from "../helpers/stream.js";

/** Each backend drains for this long on SIGTERM (GRACE_MS of test/helpers/cluster-server.ts). */
const GRACE_MS = 2_000;
/** A call that takes longer than this has hung: none may. */
const HUNG_MS = 15_000;
/**
 * Longest wait for a resumption to see that a killed process is gone: its presence lease runs
 * out within PRESENCE_TTL_MS of its last renewal, and the resumption looks every 500 ms
 * (RESUME_CHECK_MS below), with room for a loaded machine.
 */
const OWNER_GONE_MS = PRESENCE_TTL_MS + 10_000;
/** Attempts per call while backends answer 503 (draining) or a drained call asks for a retry. */
const ATTEMPTS = 40;

describe.each<RedisTopology>(["standalone", "cluster"])("Redis store, %s", (topology) => {
  /** What the clients saw; the test asserts on it and prints it. */
  const tally = {
    sent: 0,
    succeeded: 0,
    /** Attempts answered 503 + Retry-After, or with a retryable JSON-RPC error, then retried. */
    retried: 0,
    /** Calls whose POST stream broke and were resumed with Last-Event-ID elsewhere. */
    resumed: 0,
    failed: 0,
    hung: 0,
    /** Connections cut under a request (fetch threw, or the proxy saw the backend fail). */
    reset: 0,
    listenReopened: 0,
    getReconnected: 0,
  };
  const failures: string[] = [];

  let cluster: Cluster;
  /** Workers call while this holds; holders keep their streams while `holding` does. */
  let running = true;
  let holding = true;
  beforeAll(async () => {
    cluster = await startCluster({
      topology,
      server: { ...FIXTURE_SERVER, env: { GRACE_MS: String(GRACE_MS), RESUME_CHECK_MS: "500" } },
    });
  }, 120_000);
  afterAll(() => cluster?.stop());

  const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  let nextId = 1;
  const began = performance.now();

  function isRetryable(message: Record<string, unknown> | undefined): boolean {
    const error = message?.error as { data?: { retryable?: boolean } } | undefined;
    return error?.data?.retryable === true;
  }

  /** A modern tools/call through the proxy, retried while it is refused for a drain. */
  async function modernCall(name: string, args: Record<string, unknown>): Promise<boolean> {
    tally.sent++;
    const deadline = AbortSignal.timeout(HUNG_MS);
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      const id = nextId++;
      let response: Response;
      let text: string;
      try {
        response = await fetch(cluster.url, {
          method: "POST",
          headers: modernHeaders("tools/call", name),
          body: JSON.stringify({
            jsonrpc: "2.0",
            id,
            method: "tools/call",
            params: { name, arguments: args, _meta: modernMeta() },
          }),
          signal: deadline,
        });
        text = await response.text();
      } catch (error) {
        if (deadline.aborted) tally.hung++;
        else tally.reset++;
        failures.push(`modern ${name}: ${String(error)}`);
        return false;
      }
      if (response.status === 502) {
        tally.reset++;
        failures.push(`modern ${name}: 502 ${text}`);
        return false;
      }
      const messages = response.headers.get("content-type")?.startsWith("text/event-stream")
        ? (parseSse(text) as Record<string, unknown>[])
        : [JSON.parse(text) as Record<string, unknown>];
      for (const message of messages) assertModernMessage(message, "tools/call");
      const last = messages.at(-1);
      if (response.status === 503 || isRetryable(last)) {
        tally.retried++;
        await pause(Number(response.headers.get("retry-after") ?? 0) > 0 ? 100 : 50);
        continue;
      }
      if (response.status === 200 && last?.id === id && last.result) {
        tally.succeeded++;
        return true;
      }
      tally.failed++;
      failures.push(`modern ${name}: ${response.status} ${text.slice(0, 200)}`);
      return false;
    }
    tally.failed++;
    failures.push(`modern ${name}: still refused after ${ATTEMPTS} attempts`);
    return false;
  }

  /** A legacy tools/call in `session` through the proxy; a broken POST stream is resumed. */
  async function legacyCall(
    session: string,
    name: string,
    args: Record<string, unknown>,
  ): Promise<void> {
    tally.sent++;
    const deadline = AbortSignal.timeout(HUNG_MS);
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      const id = nextId++;
      try {
        const response = await fetch(cluster.url, {
          method: "POST",
          headers: legacyHeaders(session),
          body: JSON.stringify({
            jsonrpc: "2.0",
            id,
            method: "tools/call",
            params: { name, arguments: args },
          }),
          signal: deadline,
        });
        if (response.status === 503) {
          await response.text();
          tally.retried++;
          await pause(100);
          continue;
        }
        let final: Record<string, unknown> | undefined;
        let lastEventId: string | undefined;
        if (response.headers.get("content-type")?.startsWith("text/event-stream")) {
          const reader = new SseReader(response.body!);
          for (;;) {
            const message = await reader.next(HUNG_MS);
            if (!message) break;
            assertLegacyMessage(message, "tools/call");
            if (message.id === id) final = message;
          }
          lastEventId = reader.lastEventId;
          // The stream broke before the answer: resume it elsewhere (PROTOCOL §3).
          for (let resume = 0; !final && lastEventId && resume < 5; resume++) {
            tally.resumed++;
            const again = await fetch(cluster.url, {
              headers: {
                ...legacyHeaders(session),
                accept: "text/event-stream",
                "last-event-id": lastEventId,
              },
              signal: deadline,
            });
            if (again.status !== 200) {
              await again.text();
              await pause(100);
              continue;
            }
            const replay = new SseReader(again.body!);
            for (;;) {
              const message = await replay.next(HUNG_MS);
              if (!message) break;
              if (message.id === id) final = message;
            }
            lastEventId = replay.lastEventId ?? lastEventId;
          }
        } else final = (await response.json()) as Record<string, unknown>;
        if (isRetryable(final)) {
          tally.retried++;
          continue;
        }
        if (final?.result) tally.succeeded++;
        else {
          tally.failed++;
          failures.push(`legacy ${name}: ${JSON.stringify(final)?.slice(0, 200)}`);
        }
        return;
      } catch (error) {
        if (deadline.aborted) tally.hung++;
        else tally.reset++;
        failures.push(`legacy ${name}: ${String(error)}`);
        return;
      }
    }
    tally.failed++;
    failures.push(`legacy ${name}: still refused after ${ATTEMPTS} attempts`);
  }

  /** What a holder heard: list changes, and whether its stream is open now. */
  interface Heard {
    count: number;
    open: boolean;
    /** The backend its stream is open on, and since when (ms after the test began). */
    on?: string;
  }

  /** Holds a modern listen stream, reopening it whenever a drain completes it. */
  async function holdListen(received: Heard): Promise<void> {
    while (holding) {
      const response = await fetch(cluster.url, {
        method: "POST",
        headers: modernHeaders("subscriptions/listen"),
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: nextId++,
          method: "subscriptions/listen",
          params: { notifications: { toolsListChanged: true }, _meta: modernMeta() },
        }),
      }).catch(() => undefined);
      if (response?.status !== 200) {
        await response?.text();
        await pause(100);
        continue;
      }
      const reader = new SseReader(response.body!);
      received.open = true;
      received.on = `${servedBy(response)} at ${Math.round(performance.now() - began)}`;
      for (;;) {
        const message = await reader.next(1_000);
        if (!message && reader.ended) break;
        if (!holding) {
          await reader.cancel();
          return;
        }
        if (message?.method === "notifications/tools/list_changed") received.count++;
      }
      received.open = false;
      tally.listenReopened++;
    }
  }

  /** Holds a legacy GET stream, resuming it with Last-Event-ID whenever it is handed over. */
  async function holdGet(session: string, received: Heard): Promise<void> {
    let lastEventId: string | undefined;
    while (holding) {
      const headers: Record<string, string> = {
        ...legacyHeaders(session),
        accept: "text/event-stream",
      };
      if (lastEventId) headers["last-event-id"] = lastEventId;
      const response = await fetch(cluster.url, { headers }).catch(() => undefined);
      if (response?.status !== 200) {
        await response?.text();
        await pause(100);
        continue;
      }
      const reader = new SseReader(response.body!);
      // 2025-11-25 primes the stream with an event id, a resumed one after its takeover (which
      // may wait seconds for the old holder): then it is surely open.
      await expect.poll(() => reader.lastEventId ?? reader.ended, { timeout: 10_000 }).toBeTruthy();
      received.open = true;
      received.on = `${servedBy(response)} at ${Math.round(performance.now() - began)}`;
      for (;;) {
        const message = await reader.next(1_000);
        lastEventId = reader.lastEventId ?? lastEventId;
        if (!message && reader.ended) break;
        if (!holding) {
          await reader.cancel();
          return;
        }
        if (message) assertLegacyMessage(message, "");
        if (message?.method === "notifications/tools/list_changed") received.count++;
      }
      received.open = false;
      tally.getReconnected++;
    }
  }

  describe("a rolling restart of three processes, behind a round-robin proxy", () => {
    it("should lose no request: each succeeds or is retried, none hangs, none is reset", {
      timeout: 180_000,
    }, async () => {
      const send = viaUrl(cluster.url);
      const sessions = await Promise.all([0, 1, 2, 3].map(() => openSession(send)));
      const listens: Heard[] = [0, 1].map(() => ({ count: 0, open: false }));
      const gets: Heard[] = [0, 1].map(() => ({ count: 0, open: false }));
      const holders = [
        ...listens.map((received) => holdListen(received)),
        ...gets.map((received, i) => holdGet(sessions[i]!, received)),
      ];
      await expect.poll(() => [...listens, ...gets].every((heard) => heard.open)).toBe(true);
      let published = 0;
      const workers = [
        // Fast calls, slow ones, and ones longer than the grace (cut by a drain, then retried).
        ...[0, 1, 2].map(async (worker) => {
          for (let round = 0; running; round++)
            await [
              () => modernCall("echo", { text: `m${worker}-${round}` }),
              () => modernCall("paced", { n: 4, ms: 150 }),
              () => modernCall("paced", { n: 20, ms: 150 }),
            ][(round + worker) % 3]!();
        }),
        ...[2, 3].map(async (i) => {
          for (let round = 0; running; round++)
            await [
              () => legacyCall(sessions[i]!, "echo", { text: `l${i}-${round}` }),
              () => legacyCall(sessions[i]!, "paced", { n: 6, ms: 150 }),
              () => legacyCall(sessions[i]!, "paced", { n: 20, ms: 150 }),
            ][(round + i) % 3]!();
        }),
        (async () => {
          while (running) {
            if (await modernCall("notify_tools_changed", {})) published++;
            await pause(300);
          }
        })(),
      ];

      const restarts: string[] = [];
      const at = () => Math.round(performance.now() - began);
      for (const backend of cluster.backends) {
        await pause(1_000);
        restarts.push(`${backend.index} stops at ${at()}`);
        // The proxy goes on routing to it for a moment, as a load balancer that learns late.
        await backend.terminate(GRACE_MS + 5_000, 300);
        await backend.restart();
        restarts.push(`${backend.index} back as ${backend.pid} at ${at()}`);
      }
      await pause(1_000);
      running = false;
      await Promise.all(workers);
      // Every holder is live again after three drains: one more change reaches each.
      const before = [...listens, ...gets].map((heard) => heard.count);
      restarts.push(`last change at ${at()}`);
      expect(await modernCall("notify_tools_changed", {})).toBe(true);
      published++;
      // Each holder's count and whether its stream is open, so a failure names the one left out.
      const heardBy = () =>
        [...listens, ...gets].map((heard, i) => ({
          holder: i < listens.length ? `listen ${i}` : `get ${i - listens.length}`,
          ...heard,
          more: heard.count > before[i]!,
        }));
      await expect
        .poll(() => heardBy().filter((heard) => !heard.more), {
          timeout: 10_000,
          message: restarts.join(", "),
        })
        .toEqual([]);
      holding = false;
      await Promise.all(holders);

      console.log("rolling restart:", JSON.stringify({ ...tally, published }));
      expect(failures).toEqual([]);
      expect(tally.hung).toBe(0);
      expect(tally.reset).toBe(0);
      expect(tally.failed).toBe(0);
      expect(tally.succeeded).toBe(tally.sent);
      expect(tally.sent).toBeGreaterThan(50);
      // Each drain ended the listen streams and handed the GET streams over; both came back.
      expect(tally.listenReopened).toBeGreaterThanOrEqual(2);
      // Every change reached every GET stream, through each handover (at least once).
      for (const received of gets) expect(received.count).toBeGreaterThanOrEqual(published);
    });
  });

  describe("a POST stream resumed on another process after its own was killed", () => {
    it("should end with a retryable error for its request within a bounded time, not hang", {
      timeout: 60_000,
    }, async () => {
      const [owner, other] = cluster.backends;
      const session = await openSession(viaUrl(owner!.url));
      const response = await fetch(owner!.url, {
        method: "POST",
        headers: legacyHeaders(session),
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: "doomed",
          method: "tools/call",
          params: { name: "wait_for_cancel", arguments: {} },
        }),
      });
      const reader = new SseReader(response.body!);
      assertLegacyMessage(await reader.next(10_000), "");
      const lastEventId = reader.lastEventId!;
      await owner!.kill();
      await reader.done;
      const resumed = await fetch(other!.url, {
        headers: {
          ...legacyHeaders(session),
          accept: "text/event-stream",
          "last-event-id": lastEventId,
        },
        signal: AbortSignal.timeout(OWNER_GONE_MS),
      });
      expect(resumed.status).toBe(200);
      const replay = new SseReader(resumed.body!);
      const answer = await replay.next(OWNER_GONE_MS);
      assertLegacyMessage(answer, "tools/call");
      expect(answer).toMatchObject({
        id: "doomed",
        error: { code: -32603, data: { retryable: true } },
      });
      await replay.done;
      // The log records it: a later resumption ends at once with the same answer.
      const again = await fetch(other!.url, {
        headers: {
          ...legacyHeaders(session),
          accept: "text/event-stream",
          "last-event-id": lastEventId,
        },
        signal: AbortSignal.timeout(HUNG_MS),
      });
      const text = await again.text();
      expect(parseSse(text)).toEqual([answer]);
      await owner!.restart();
    });
  });
});
