import { type ChildProcess, fork } from "node:child_process";
import { once } from "node:events";
import type { IncomingMessage } from "node:http";
import { fileURLToPath } from "node:url";
import { Pool } from "undici";
import { positiveIntegers } from "./config.js";
import { LEGACY_VERSION, REQUEST_HEADERS } from "./request.js";
import type { HeapMessage } from "./servers/stream-memory-server.js";
import { openAll, openSse } from "./sse.js";
import { median } from "./stats.js";
import { legacyWorkload } from "./workload.js";

// Heap (and RSS) per idle long-lived stream in the server process (`npm run bench:memory:streams`):
// N modern `subscriptions/listen` streams, and N legacy GET streams on initialized sessions (the
// sessions measured first, so the GET stream's own cost is apart), against a bare node:http
// server holding N plain SSE responses: that is what Node's socket, parser, request and response
// cost, and the difference is ours. Each server is its own process run with --expose-gc, read
// after forced GCs; this process holds the client ends. Warm-up streams are opened and closed
// before the baseline, so code and pools are warm. BENCH_HOST=express serves both at
// app.use("/mcp", …) of an Express 5 app: the bare one then costs what Express adds too.

const [count = 2_000] = positiveIntegers("BENCH_STREAMS", [2_000]);
const [warmup = 300] = positiveIntegers("BENCH_WARMUP_STREAMS", [300]);
const [rounds = 2] = positiveIntegers("BENCH_ROUNDS", [2]);
const host = process.env.BENCH_HOST || "node";
if (host !== "node" && host !== "express")
  throw new TypeError("BENCH_HOST must be node or express");
const HOST = host === "express" ? "Express 5" : "node:http";
/** Issue 15: at most 4 KB of heap per idle stream beyond Node's socket cost. */
const TARGET_BYTES = 4 * 1024;

const log = (line: string) => process.stderr.write(`${line}\n`);
const SERVER = fileURLToPath(new URL("./servers/stream-memory-server.ts", import.meta.url));

interface Server {
  port: number;
  child: ChildProcess;
  heap(): Promise<HeapMessage>;
}

async function startServer(kind: "bare" | "mcp-mount"): Promise<Server> {
  const child = fork(SERVER, [], {
    execArgv: ["--expose-gc", "--import", "tsx"],
    env: { ...process.env, NODE_ENV: "production", BENCH_SERVER: kind },
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  const [ready] = (await once(child, "message")) as [{ port: number }];
  return {
    port: ready.port,
    child,
    async heap() {
      const reply = once(child, "message");
      child.send("heap");
      return ((await reply) as [HeapMessage])[0];
    },
  };
}

const openStream = openSse;

const MODERN_VERSION = REQUEST_HEADERS["mcp-protocol-version"]!;
const listen = (port: number) => (i: number) =>
  openStream(
    port,
    "POST",
    {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": MODERN_VERSION,
      "mcp-method": "subscriptions/listen",
    },
    JSON.stringify({
      jsonrpc: "2.0",
      id: `listen-${i}`,
      method: "subscriptions/listen",
      params: {
        notifications: { toolsListChanged: true },
        _meta: {
          "io.modelcontextprotocol/protocolVersion": MODERN_VERSION,
          "io.modelcontextprotocol/clientCapabilities": {},
        },
      },
    }),
  );
const getStream = (port: number, session: string) =>
  openStream(port, "GET", {
    accept: "text/event-stream",
    "mcp-protocol-version": LEGACY_VERSION,
    "mcp-session-id": session,
  });
const bareStream = (port: number) => () => openStream(port, "GET", { accept: "text/event-stream" });

const close = async (responses: IncomingMessage[]) => {
  for (const response of responses) response.destroy();
  await new Promise((resolve) => setTimeout(resolve, 500));
};

async function sessions(port: number, n: number): Promise<string[]> {
  const pool = new Pool(`http://127.0.0.1:${port}`, { connections: 16 });
  try {
    return await openAll(
      n,
      async () => (await legacyWorkload.open(pool)).headers["mcp-session-id"]!,
    );
  } finally {
    await pool.close();
  }
}

/** Growth of heap, external memory and RSS, per stream (or session). */
interface Cost {
  heap: number;
  external: number;
  rss: number;
}

const per = (after: HeapMessage, before: HeapMessage, n: number): Cost => ({
  heap: (after.heapUsed - before.heapUsed) / n,
  external: (after.external - before.external) / n,
  rss: (after.rss - before.rss) / n,
});

/** One round: the bare baseline, then listen streams, then legacy sessions and their GET streams. */
async function round(): Promise<Record<"bare" | "listen" | "session" | "get", Cost>> {
  const bare = await startServer("bare");
  const mount = await startServer("mcp-mount");
  try {
    await close(await openAll(warmup, bareStream(bare.port)));
    let base = await bare.heap();
    const plain = await openAll(count, bareStream(bare.port));
    const bareCost = per(await bare.heap(), base, count);
    await close(plain);

    // Warm-up: listen streams, sessions and GET streams opened and closed.
    await close(await openAll(warmup, listen(mount.port)));
    const warm = await sessions(mount.port, warmup);
    await close(await openAll(warmup, (i) => getStream(mount.port, warm[i]!)));
    base = await mount.heap();
    const listens = await openAll(count, listen(mount.port));
    const listenCost = per(await mount.heap(), base, count);
    await close(listens);

    base = await mount.heap();
    const ids = await sessions(mount.port, count);
    const withSessions = await mount.heap();
    const gets = await openAll(count, (i) => getStream(mount.port, ids[i]!));
    const getCost = per(await mount.heap(), withSessions, count);
    await close(gets);
    return {
      bare: bareCost,
      listen: listenCost,
      session: per(withSessions, base, count),
      get: getCost,
    };
  } finally {
    bare.child.disconnect();
    mount.child.disconnect();
  }
}

const results: Awaited<ReturnType<typeof round>>[] = [];
for (let r = 0; r < rounds; r++) {
  const result = await round();
  results.push(result);
  log(
    `round ${r + 1}: heap per stream: bare ${result.bare.heap.toFixed(0)} B, listen ${result.listen.heap.toFixed(0)} B, legacy GET ${result.get.heap.toFixed(0)} B; per idle session ${result.session.heap.toFixed(0)} B`,
  );
}

const b = (n: number) => `${Math.round(n).toLocaleString("en-US")} B`;
const mid = (key: "bare" | "listen" | "session" | "get", field: keyof Cost) =>
  median(results.map((result) => result[key][field]));
console.log(
  `\nNode ${process.version}; ${count.toLocaleString("en-US")} idle streams per kind on ${HOST}, ${rounds} rounds (medians); memory store\n`,
);
console.log(
  `| per idle stream | heap | heap beyond bare ${HOST} (target ≤ ${b(TARGET_BYTES)}) | external | RSS | RSS beyond bare |`,
);
console.log("| --- | ---: | ---: | ---: | ---: | ---: |");
const bareHeap = mid("bare", "heap");
const bareRss = mid("bare", "rss");
console.log(
  `| bare ${HOST} SSE response | ${b(bareHeap)} | — | ${b(mid("bare", "external"))} | ${b(bareRss)} | — |`,
);
let met = true;
for (const [key, name] of [
  ["listen", "modern subscriptions/listen"],
  ["get", "legacy GET stream (its session apart)"],
] as const) {
  const beyond = mid(key, "heap") - bareHeap;
  met &&= beyond <= TARGET_BYTES;
  console.log(
    `| ${name} | ${b(mid(key, "heap"))} | ${b(beyond)} ${beyond <= TARGET_BYTES ? "met" : "MISSED"} | ${b(mid(key, "external"))} | ${b(mid(key, "rss"))} | ${b(mid(key, "rss") - bareRss)} |`,
  );
}
console.log(
  `| idle legacy session, no stream (memory store) | ${b(mid("session", "heap"))} | — | ${b(mid("session", "external"))} | ${b(mid("session", "rss"))} | — |`,
);
console.log(
  `\ntarget (≤ ${b(TARGET_BYTES)} of heap per idle stream beyond Node's): ${met ? "MET" : "NOT MET"}`,
);
