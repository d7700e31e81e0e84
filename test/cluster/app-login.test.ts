import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Cluster, type RedisTopology, servedBy, startCluster } from "../helpers/cluster.js";
import { loginCookie } from "../helpers/cookie-login.js";
import { legacyCall, openSession } from "../helpers/legacy.js";
import { call, type Exchange, type Send, viaUrl } from "../helpers/modern.js";

const LOGIN_SERVER = {
  script: fileURLToPath(new URL("../helpers/cluster-login-server.ts", import.meta.url)),
  // The same secret in every process: a cookie signed by one verifies on all of them.
  env: { COOKIE_SECRET: "cluster-cookie-secret" },
  listening: /^listening (\d+)$/m,
};
const TASKS = { extensions: { "io.modelcontextprotocol/tasks": {} } };
const ELICITATION = { elicitation: {} };
const PROCESSES = 3;
/** Generous: these suites share a loaded machine with every other suite. */
const WAIT_MS = 15_000;

/** Sends the same request once per backend: the proxy's round robin gives each its turn. */
async function onEvery<T extends { headers: Headers }>(send: () => Promise<T>): Promise<T[]> {
  const answers: T[] = [];
  for (let i = 0; i < PROCESSES; i++) answers.push(await send());
  return answers;
}

/** The backends that served `answers`. */
const backendsOf = (answers: readonly { headers: Headers }[]) => new Set(answers.map(servedBy));
const ALL = new Set([0, 1, 2]);

// The app's cookie login across three processes on one Redis node, and on a Redis Cluster, behind
// a round-robin proxy with no stickiness: whichever process a request lands on, the user is the
// one the cookie names.
describe.each<RedisTopology>(["standalone", "cluster"])(
  "a signed-cookie login as the MCP principal across three processes (Redis store, %s)",
  (topology) => {
    let cluster: Cluster;
    const cookies: Record<string, string> = {};
    const user =
      (name: string): Send =>
      (request) =>
        viaUrl(cluster.url)({
          ...request,
          headers: { ...request.headers, cookie: cookies[name]! },
        });

    beforeAll(async () => {
      cluster = await startCluster({ processes: PROCESSES, server: LOGIN_SERVER, topology });
      const origin = new URL(cluster.url).origin;
      for (const name of ["ada", "bob"]) {
        const response = await fetch(`${origin}/login?user=${name}`, { method: "POST" });
        expect(response.status).toBe(204);
        cookies[name] = loginCookie(response.headers);
      }
    }, 90_000);
    afterAll(() => cluster?.stop());

    it("should know each user on every process, whichever one set the cookie", async () => {
      for (const name of ["ada", "bob"]) {
        const answers = await onEvery(() =>
          call(user(name), "tools/call", { name: "whoami", arguments: {} }),
        );
        expect(answers.map((answer) => answer.result.structuredContent)).toEqual(
          answers.map(() => expect.objectContaining({ user: name, subject: name })),
        );
        expect(backendsOf(answers)).toEqual(ALL);
        const pids = answers.map(
          (answer) => (answer.result.structuredContent as { pid: number }).pid,
        );
        expect(new Set(pids).size).toBe(PROCESSES);
      }
    });

    it("should serve ada's legacy session for ada on every process, and refuse bob on every one", async () => {
      const session = await openSession(user("ada"));
      const mine = await onEvery(() =>
        legacyCall(user("ada"), session, "tools/call", { name: "whoami", arguments: {} }),
      );
      expect(mine.map((answer) => answer.result.structuredContent)).toEqual(
        mine.map(() => expect.objectContaining({ user: "ada", subject: "ada" })),
      );
      expect(backendsOf(mine)).toEqual(ALL);
      const theirs = await onEvery(() => legacyCall(user("bob"), session, "tools/list"));
      expect(theirs.map((answer) => [answer.status, answer.error?.message])).toEqual(
        theirs.map(() => [404, "Session not found"]),
      );
      expect(backendsOf(theirs)).toEqual(ALL);
    });

    it("should serve ada's multi round-trip state for ada on every process, and refuse bob on every one", async () => {
      const retry = (send: Send, requestState: unknown) =>
        call(
          send,
          "tools/call",
          {
            name: "ask",
            arguments: {},
            inputResponses: { ok: { action: "accept", content: {} } },
            requestState,
          },
          { capabilities: ELICITATION },
        );
      const served: Exchange[] = [];
      // The state is single-use, so one first round per retry of ada's.
      for (let round = 0; round < PROCESSES; round++) {
        const first = await call(
          user("ada"),
          "tools/call",
          { name: "ask", arguments: {} },
          { capabilities: ELICITATION },
        );
        expect(first.result.resultType).toBe("input_required");
        const theirs = await onEvery(() => retry(user("bob"), first.result.requestState));
        expect(theirs.map((answer) => answer.error?.code)).toEqual([-32602, -32602, -32602]);
        expect(backendsOf(theirs)).toEqual(ALL);
        // Bob's attempts spent nothing: the state is still ada's to use, once.
        served.push(await retry(user("ada"), first.result.requestState));
      }
      expect(served.map((answer) => answer.result.structuredContent)).toEqual(
        served.map(() => ({ action: "accept", user: "ada" })),
      );
      // Five requests a round through the round robin: ada's retries fall on each process in turn.
      expect(backendsOf(served)).toEqual(ALL);
    });

    it("should serve ada's task for ada on every process, and answer bob 'not found' on every one", async () => {
      const created = await call(
        user("ada"),
        "tools/call",
        { name: "job", arguments: {} },
        { capabilities: TASKS },
      );
      expect(created.result.resultType).toBe("task");
      const taskId = created.result.taskId as string;
      const get = (send: Send) =>
        call(
          send,
          "tasks/get",
          { taskId },
          { capabilities: TASKS, headers: { "mcp-name": taskId } },
        );
      await expect
        .poll(async () => (await get(user("ada"))).result.status, { timeout: WAIT_MS })
        .toBe("completed");
      const mine = await onEvery(() => get(user("ada")));
      expect(mine.map((answer) => answer.result)).toEqual(
        mine.map(() =>
          expect.objectContaining({
            status: "completed",
            result: expect.objectContaining({
              structuredContent: expect.objectContaining({ user: "ada" }),
            }),
          }),
        ),
      );
      expect(backendsOf(mine)).toEqual(ALL);
      const theirs = await onEvery(() => get(user("bob")));
      expect(theirs.map((answer) => answer.error?.message)).toEqual(
        theirs.map(() => expect.stringMatching(/not found/i)),
      );
      expect(backendsOf(theirs)).toEqual(ALL);
    });
  },
);
