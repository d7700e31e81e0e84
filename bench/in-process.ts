import { fork } from "node:child_process";
import { once } from "node:events";
import { createServer, IncomingMessage, type RequestListener, ServerResponse } from "node:http";
import { type AddressInfo, connect } from "node:net";
import { fileURLToPath } from "node:url";
import express from "express";
import { createMcpHandler } from "mcp-mount";
import { toExpress } from "mcp-mount/express";
import { toNodeHandler } from "mcp-mount/node";
import { shareShape } from "../src/adapters/shared-shape.js";
import { shallowCopy } from "../src/utils/shallow-copy.js";
import { positive } from "./config.js";
import { fixed } from "./report.js";
import { inProcessRequest, MCP_PATH, rawRequest } from "./request.js";
import { cannedListener, cannedMcp } from "./servers/canned.js";
import { createEchoServer } from "./servers/echo-server.js";
import { median } from "./stats.js";

// Where a request's CPU goes, each case in a process of its own, its client in that process too,
// so that no other process's scheduling blurs it and no case's types reach another's inline
// caches (`npm run bench:inprocess`):
// 1. `mcp.handle()` alone: the package's own work for an echo tools/call, no socket.
// 2. The same traffic through real loopback sockets from a raw HTTP/1.1 client in this process,
//    against bare node:http, the node adapter with a canned answer, the mount, both of those
//    with req/res re-prototyped per request as Express does, bare Express (also with req/res
//    made dictionaries, as the Express adapter makes them: shareShape), the Express adapter
//    with a canned answer and the mount on Express; CPU per request is client and server
//    together, so only differences between rows mean anything.
// 3. The V8 pattern shallowCopy avoids: properties added to an object made by a spread.
// Each figure is the minimum over BENCH_REPS rounds (default 9), a fresh process per case and
// round, warmed up first, and their median.

const reps = Math.round(positive("BENCH_REPS", 9));
const REQUESTS = Math.round(positive("BENCH_REQUESTS", 20_000));
const CONNECTIONS = 8;
const SECRET = "bench-secret-0123456789abcdef";

const mcp = createMcpHandler(createEchoServer("bench-in-process"), { secret: SECRET });

/** CPU of this process per call of `run`, in µs, over `n` calls awaited one by one. */
async function cpuPer(n: number, run: (i: number) => Promise<unknown>): Promise<number> {
  const start = process.cpuUsage();
  for (let i = 0; i < n; i++) await run(i);
  const used = process.cpuUsage(start);
  return (used.user + used.system) / n;
}

/** CPU per call of a synchronous `run`, in ns, over `n` calls. */
function nanosPer(n: number, run: (i: number) => unknown): number {
  const start = process.cpuUsage();
  for (let i = 0; i < n; i++) run(i);
  const used = process.cpuUsage(start);
  return ((used.user + used.system) * 1000) / n;
}

// 1. mcp.handle() with a request object that costs nothing to read.
const handleCall = async (i: number) => {
  const response = await mcp.handle(inProcessRequest(i));
  if (response.status !== 200) throw new Error(`handle answered ${response.status}`);
};

// 2. Listeners on real sockets.
const node = toNodeHandler(mcp);
const adapterOnly = toNodeHandler(cannedMcp);

/**
 * What Express does to every request before any middleware runs: `req` and `res` get a new
 * prototype (`Object.setPrototypeOf(req, app.request)`) and a few properties. Run in front of a
 * plain node:http listener, it shows what that costs Node's own HTTP code and ours, without the
 * rest of Express (whose prototypes carry dozens of methods: this shows the kind of cost, not
 * its exact size).
 */
function reprototyped(listener: RequestListener): RequestListener {
  const requestProto = Object.create(IncomingMessage.prototype, { app: { value: {} } });
  const responseProto = Object.create(ServerResponse.prototype, { app: { value: {} } });
  return (req, res) => {
    Object.setPrototypeOf(req, requestProto);
    Object.setPrototypeOf(res, responseProto);
    Object.assign(req, { res, next: () => {} });
    Object.assign(res, { req, locals: Object.create(null) });
    listener(req, res);
  };
}

const BARE_NODE = "bare node:http";
const BARE_EXPRESS = "bare Express 5";
const REPROTOTYPED = "bare node:http, re-prototyped as Express does";
/** Each row: its name, its listener, and the bare host its extra cost is measured against. */
const LISTENERS: [string, RequestListener, string][] = [
  [BARE_NODE, cannedListener, BARE_NODE],
  ["node adapter, canned answer", (req, res) => void adapterOnly(req, res), BARE_NODE],
  ["mcp-mount", (req, res) => void node(req, res), BARE_NODE],
  [REPROTOTYPED, reprototyped(cannedListener), REPROTOTYPED],
  [
    "mcp-mount, re-prototyped as Express does",
    reprototyped((req, res) => void node(req, res)),
    REPROTOTYPED,
  ],
  [BARE_EXPRESS, express().use(MCP_PATH, cannedListener), BARE_EXPRESS],
  [
    "bare Express 5, req/res made dictionaries as the adapter does",
    express().use(MCP_PATH, (req, res) => {
      shareShape(req);
      shareShape(res);
      cannedListener(req, res);
    }),
    BARE_EXPRESS,
  ],
  ["Express adapter, canned answer", express().use(MCP_PATH, toExpress(cannedMcp)), BARE_EXPRESS],
  ["mcp-mount on Express", express().use(MCP_PATH, toExpress(mcp)), BARE_EXPRESS],
];

/** Sends `n` requests over CONNECTIONS keep-alive sockets, one at a time on each; µs of CPU each. */
async function overSockets(listener: RequestListener, n: number): Promise<number> {
  const server = createServer(listener);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  let answered = 0;
  let sent = 0;
  const start = process.cpuUsage();
  await Promise.all(
    Array.from(
      { length: CONNECTIONS },
      () =>
        new Promise<void>((resolve, reject) => {
          const socket = connect(port, "127.0.0.1");
          let buffered = "";
          const next = () => {
            if (sent >= n) {
              socket.end();
              resolve();
            } else socket.write(rawRequest(port, ++sent));
          };
          socket.setEncoding("latin1");
          socket.on("connect", next).on("error", reject);
          socket.on("data", (data: string) => {
            buffered += data;
            for (;;) {
              const end = buffered.indexOf("\r\n\r\n");
              if (end < 0) return;
              const length = Number(/content-length: (\d+)/i.exec(buffered.slice(0, end))?.[1]);
              if (buffered.length < end + 4 + length) return;
              if (!buffered.startsWith("HTTP/1.1 200")) reject(new Error(buffered.slice(0, end)));
              buffered = buffered.slice(end + 4 + length);
              answered++;
              next();
            }
          });
        }),
    ),
  );
  const used = process.cpuUsage(start);
  server.closeAllConnections();
  server.close();
  return (used.user + used.system) / answered;
}

// 3. The spread pattern.
const META = Object.freeze({ "io.modelcontextprotocol/serverInfo": { name: "m", version: "1" } });
const made = (i: number) => ({ content: [{ type: "text", text: `t${i & 7}` }] });
const decorate = (result: Record<string, unknown>) => {
  result.resultType ??= "complete";
  result._meta = META;
  return result;
};
const PATTERNS: [string, (i: number) => Record<string, unknown>][] = [
  ["spread, then two properties added", (i) => decorate({ ...made(i) })],
  ["shallowCopy, then the same", (i) => decorate(shallowCopy(made(i)))],
];

interface Case {
  section: string;
  name: string;
  unit: "µs" | "ns";
  /** The row whose figure this one's extra cost is measured against (socket rows). */
  host?: string;
  /** Warms up, then measures once. */
  measure(): Promise<number>;
}

const HANDLE = "mcp.handle(), no socket";
const SOCKETS = "over loopback sockets, client and server CPU per request";
const PATTERN = "a result decorated for the wire";
const CASES: Case[] = [
  {
    section: HANDLE,
    name: "echo tools/call",
    unit: "µs",
    measure: async () => {
      await cpuPer(REQUESTS, handleCall);
      return cpuPer(REQUESTS, handleCall);
    },
  },
  ...LISTENERS.map(
    ([name, listener, host]): Case => ({
      section: SOCKETS,
      name,
      host,
      unit: "µs",
      measure: async () => {
        await overSockets(listener, REQUESTS / 4);
        return overSockets(listener, REQUESTS);
      },
    }),
  ),
  ...PATTERNS.map(
    ([name, make]): Case => ({
      section: PATTERN,
      name,
      unit: "ns",
      measure: async () => {
        nanosPer(REQUESTS * 10, make);
        return nanosPer(REQUESTS * 10, make);
      },
    }),
  ),
];

const only = process.env.BENCH_IN_PROCESS_CASE;
if (only !== undefined) {
  // A child: one case, one measurement, told to the parent.
  process.send?.(await CASES[Number(only)]!.measure());
  process.exit(0);
}

/** Runs case `index` in a fresh process and returns its measurement. */
async function inChild(index: number): Promise<number> {
  const child = fork(fileURLToPath(import.meta.url), [], {
    execArgv: ["--import", import.meta.resolve("tsx")],
    env: { ...process.env, NODE_ENV: "production", BENCH_IN_PROCESS_CASE: String(index) },
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  const [value] = (await once(child, "message")) as [number];
  await once(child, "exit");
  return value;
}

const runs = CASES.map((): number[] => []);
for (let rep = 0; rep < reps; rep++) {
  for (const [index] of CASES.entries()) runs[index]!.push(await inChild(index));
  process.stderr.write(`round ${rep + 1}/${reps}\n`);
}

const minOf = (name: string) => Math.min(...runs[CASES.findIndex((c) => c.name === name)]!);
console.log(`\nNode ${process.version}; ${reps} rounds of ${REQUESTS} requests; min and median\n`);
for (const section of [HANDLE, SOCKETS, PATTERN]) {
  const beyond = section === SOCKETS;
  console.log(`| ${section} | min | median |${beyond ? " min beyond its bare host |" : ""}`);
  console.log(`| --- | ---: | ---: |${beyond ? " ---: |" : ""}`);
  for (const [index, c] of CASES.entries()) {
    if (c.section !== section) continue;
    const values = runs[index]!;
    const min = Math.min(...values);
    const extra = c.host ? ` ${fixed(min - minOf(c.host), 1)} µs |` : "";
    console.log(
      `| ${c.name} | ${fixed(min, 1)} ${c.unit} | ${fixed(median(values), 1)} ${c.unit} |${extra}`,
    );
  }
  console.log("");
}
