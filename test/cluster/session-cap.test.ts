// One client's cap of legacy sessions counted once for three processes (Redis store, one node
// and a three-master Cluster, round-robin proxy): beyond it, its least recently used sessions
// end, never an active one, never another client's.
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type Cluster,
  type ClusterServer,
  type OpenStream,
  openStream,
  type RedisTopology,
  servedBy,
  startCluster,
} from "../helpers/cluster.js";
import { legacyCall, legacyHeaders, openSession } from "../helpers/legacy.js";
import { type Send, viaUrl, withBearer } from "../helpers/modern.js";

const CAP = 4;
const SESSION_CAP_SERVER: ClusterServer = {
  script: fileURLToPath(new URL("../helpers/session-cap-cluster-server.ts", import.meta.url)),
  env: { MAX_SESSIONS_PER_CLIENT: String(CAP) },
  listening: /^listening (\d+)$/m,
};

describe.each<RedisTopology>(["standalone", "cluster"])(
  "legacy sessions per client across processes (Redis store, %s)",
  (topology) => {
    let cluster: Cluster;
    let proxy: Send;

    beforeAll(async () => {
      cluster = await startCluster({ processes: 3, topology, server: SESSION_CAP_SERVER });
      proxy = viaUrl(cluster.url);
    }, 90_000);
    afterAll(async () => {
      await cluster?.stop();
    });

    /** A request of `token`'s on `session` whose answer is an SSE stream left open. */
    const streamOf = (token: string, session: string, init: RequestInit): Promise<OpenStream> =>
      openStream(cluster.url, {
        ...init,
        headers: { ...legacyHeaders(session), authorization: `Bearer ${token}`, ...init.headers },
      });
    const status = async (send: Send, session: string) =>
      (await legacyCall(send, session, "ping")).status;

    it("should end a client's least recently used sessions, never an active one nor another client's", async () => {
      const alice = withBearer(proxy, "alice");
      const bob = withBearer(proxy, "bob");
      const bobs = [await openSession(bob), await openSession(bob)];
      const [a1, a2, a3] = [
        await openSession(alice),
        await openSession(alice),
        await openSession(alice, { elicitation: {} }),
      ];
      const older = [a1!, a2!, a3!, await openSession(alice)];

      // a1 holds a GET stream open; a3 runs a request that awaits the client's answer.
      const listening = await streamOf("alice", a1!, {
        method: "GET",
        headers: { accept: "text/event-stream" },
      });
      expect(listening.response.status).toBe(200);
      const running = await streamOf("alice", a3!, {
        method: "POST",
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: "ask",
          method: "tools/call",
          params: { name: "confirm", arguments: { item: "x" } },
        }),
      });
      const asked = await running.reader.next(10_000);
      expect(asked).toMatchObject({ method: "elicitation/create" });

      // Six more, each opened on the next process, and a2 used before each.
      const newer: string[] = [];
      const openedOn = new Set<number>();
      for (let i = 0; i < 6; i++) {
        expect(await status(alice, a2!), `a2 before session ${i}`).toBe(200);
        const answer = await alice({
          method: "POST",
          headers: legacyHeaders(),
          body: JSON.stringify({
            jsonrpc: "2.0",
            id: i,
            method: "initialize",
            params: {
              protocolVersion: "2025-11-25",
              capabilities: {},
              clientInfo: { name: "t", version: "0" },
            },
          }),
        });
        expect(answer.status).toBe(200);
        openedOn.add(servedBy(answer));
        newer.push(answer.headers.get("mcp-session-id")!);
      }
      expect(openedOn).toEqual(new Set([0, 1, 2]));

      // One figure for the three processes: the three in use and the newest live, the rest end.
      const live = [...older, ...newer];
      const statuses = await Promise.all(live.map((session) => status(alice, session)));
      expect(statuses).toEqual([200, 200, 200, 404, 404, 404, 404, 404, 404, 200]);
      for (const session of bobs) expect(await status(bob, session)).toBe(200);
      // Ended everywhere: every process answers 404 for an ended one.
      const ended = live[3]!;
      const everywhere = await Promise.all([0, 1, 2].map(() => status(alice, ended)));
      expect(everywhere).toEqual([404, 404, 404]);

      // The request in flight still gets its answer, the stream still stands.
      const reply = await alice({
        method: "POST",
        headers: legacyHeaders(a3),
        body: JSON.stringify({ jsonrpc: "2.0", id: asked?.id, result: { action: "decline" } }),
      });
      expect(reply.status).toBe(202);
      expect(await running.reader.next(10_000)).toMatchObject({ id: "ask", result: {} });
      await listening.reader.cancel();
    });
  },
);
