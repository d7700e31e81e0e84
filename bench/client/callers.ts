import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { ECHO_MARK, ECHO_TEXT, REQUEST_HEADERS, requestBody } from "../request.js";

/** One way of calling the echo tool: connect once, then `call` from as many loops as wanted. */
export interface Caller {
  call(): Promise<void>;
  close(): Promise<void>;
}

/** The callers compared, in report order. */
export const CALLER_IDS = ["mcp-mount-node", "mcp-mount", "sdk", "fetch"] as const;

/** Our own callers: the rows the ratio columns are filled for. */
export const OUR_CALLERS: readonly CallerId[] = ["mcp-mount-node", "mcp-mount"];

/** One of {@link CALLER_IDS}. */
export type CallerId = (typeof CALLER_IDS)[number];

/** How each caller is named in the report. */
export const CALLER_LABELS: Record<CallerId, string> = {
  "mcp-mount-node": "McpClient with nodeFetch (mcp-mount/client/node)",
  "mcp-mount": "McpClient (mcp-mount/client), Node's fetch",
  sdk: "official SDK v2 Client",
  fetch: "bare fetch, same JSON-RPC",
};

/** mcp-mount/client and mcp-mount/client/node, as a user imports them. */
export interface ClientModule {
  client: typeof import("mcp-mount/client");
  node: typeof import("mcp-mount/client/node");
}

/**
 * mcp-mount/client (and /node) as a user imports it, from the package's dist/;
 * BENCH_PACKAGE=/dir takes another build (a directory holding package.json and dist/).
 */
export async function loadClientModule(): Promise<ClientModule> {
  const root = process.env.BENCH_PACKAGE;
  if (!root)
    return {
      client: await import("mcp-mount/client"),
      node: await import("mcp-mount/client/node"),
    };
  const entry = (name: string) => pathToFileURL(join(root, "dist", "client", name)).href;
  return { client: await import(entry("index.js")), node: await import(entry("node.js")) };
}

function checkText(content: unknown): void {
  const [block] = Array.isArray(content) ? content : [];
  if (block?.type !== "text" || block.text !== ECHO_TEXT) {
    throw new Error(`expected the echoed text, got ${JSON.stringify(content)}`);
  }
}

/**
 * Our client, connected once (it detects the modern era by itself), sending through Node's
 * fetch or, with `viaNode`, through nodeFetch as its docs suggest on Node.
 */
export async function mcpMountCaller(
  module: ClientModule,
  url: string,
  viaNode: boolean,
): Promise<Caller> {
  const options = viaNode ? { fetch: module.node.nodeFetch() } : {};
  const client = await module.client.McpClient.connect(url, options);
  return {
    async call() {
      const result = await client.callTool("echo", { text: ECHO_TEXT });
      checkText(result.content);
    },
    close: () => client.close(),
  };
}

/** The official SDK v2 client, pinned to 2026-07-28 as its README connects to a modern server. */
export async function sdkCaller(url: string): Promise<Caller> {
  const client = new Client(
    { name: "bench-client", version: "1.0.0" },
    { versionNegotiation: { mode: { pin: "2026-07-28" } } },
  );
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  return {
    async call() {
      const result = await client.callTool({ name: "echo", arguments: { text: ECHO_TEXT } });
      checkText(result.content);
    },
    close: () => client.close(),
  };
}

let nextId = 1;

/** The ceiling: fetch posting the same modern tools/call and reading the answer, nothing else. */
export async function fetchCaller(url: string): Promise<Caller> {
  return {
    async call() {
      const response = await fetch(url, {
        method: "POST",
        headers: REQUEST_HEADERS,
        body: requestBody(nextId++),
      });
      const text = await response.text();
      if (response.status !== 200 || !text.includes(ECHO_MARK)) {
        throw new Error(`HTTP ${response.status} ${text.slice(0, 300)}`);
      }
    },
    close: async () => {},
  };
}

/** Connects a caller of kind `id` to the echo server at `url`. */
export function connectCaller(id: CallerId, module: ClientModule, url: string): Promise<Caller> {
  if (id === "mcp-mount" || id === "mcp-mount-node") {
    return mcpMountCaller(module, url, id === "mcp-mount-node");
  }
  if (id === "sdk") return sdkCaller(url);
  return fetchCaller(url);
}

/** What one timed window of calls measured. */
export interface CallWindow {
  calls: number;
  callsPerSecond: number;
  /** This process's CPU time (user + system) per call, in microseconds: the client's cost. */
  cpuPerCall: number;
}

/** Calls from `concurrency` loops for `durationMs`, each loop awaiting its previous call. */
export async function drive(
  caller: Caller,
  concurrency: number,
  durationMs: number,
): Promise<CallWindow> {
  let calls = 0;
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  const until = started + durationMs;
  const loop = async () => {
    while (performance.now() < until) {
      await caller.call();
      calls++;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, loop));
  const seconds = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  return { calls, callsPerSecond: calls / seconds, cpuPerCall: (cpu.user + cpu.system) / calls };
}
