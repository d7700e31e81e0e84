import { execFile } from "node:child_process";
import { Agent, createServer, request } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { getHeapSpaceStatistics } from "node:v8";
import { createMcpHandler } from "mcp-mount";
import { toNodeHandler } from "mcp-mount/node";
import { positive } from "./config.js";
import {
  ECHO_MARK,
  INITIALIZE_BODY,
  INITIALIZE_HEADERS,
  INITIALIZED_BODY,
  LEGACY_HEADERS,
  legacyRequestBody,
  MCP_PATH,
  REQUEST_HEADERS,
  requestBody,
} from "./request.js";
import { createEchoServer } from "./servers/echo-server.js";
import { median } from "./stats.js";

// What a warm tools/call leaves in V8's old space (`npm run bench:old-space`): in a fresh process
// per run, the built package's echo server on node:http and a keep-alive client calling it one
// request at a time; after BENCH_WARM requests two forced collections, then BENCH_REQUESTS more,
// and the old space's growth divided by them. What grows there without being promoted by a
// scavenge (a long-lived Map's new tables are allocated where the Map lives) is what brings the
// mark-compacts a legacy session's windows showed in `bench:instructions`. Both eras, the modern
// call and a legacy session's, alternating; BENCH_RUNS processes each. The client's own share is
// the same in both, so the difference between the eras is the server's.

const WARM = Math.round(positive("BENCH_WARM", 15_000));
const REQUESTS = Math.round(positive("BENCH_REQUESTS", 6_000));
const RUNS = Math.round(positive("BENCH_RUNS", 3));
const ERAS = ["modern", "legacy"] as const;
type Era = (typeof ERAS)[number];

const oldSpaceUsed = () =>
  getHeapSpaceStatistics().find((space) => space.space_name === "old_space")!.space_used_size;

/** One run, in this process (a child): the old space's growth per request, in bytes. */
async function child(era: Era): Promise<number> {
  const mcp = createMcpHandler(createEchoServer("old-space"));
  const listener = createServer(toNodeHandler(mcp));
  await new Promise<void>((resolve) => listener.listen(0, "127.0.0.1", resolve));
  const { port } = listener.address() as AddressInfo;
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const post = (headers: Record<string, string>, body: string) =>
    new Promise<{ text: string; session?: string }>((resolve, reject) => {
      const req = request({
        host: "127.0.0.1",
        port,
        path: MCP_PATH,
        method: "POST",
        agent,
        headers,
      });
      req.on("response", (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => {
          text += chunk;
        });
        const session = res.headers["mcp-session-id"];
        res.on("end", () =>
          resolve({ text, session: typeof session === "string" ? session : undefined }),
        );
      });
      req.on("error", reject);
      req.end(body);
    });
  let call = (id: number) => post(REQUEST_HEADERS, requestBody(id));
  if (era === "legacy") {
    const { session } = await post(INITIALIZE_HEADERS, INITIALIZE_BODY);
    const headers = { ...LEGACY_HEADERS, "mcp-session-id": session! };
    await post(headers, INITIALIZED_BODY);
    call = (id) => post(headers, legacyRequestBody(id));
  }
  for (let id = 1; id <= WARM; id++) await call(id);
  const gc = (globalThis as { gc?: () => void }).gc!;
  gc();
  gc();
  const before = oldSpaceUsed();
  for (let id = WARM + 1; id <= WARM + REQUESTS; id++) {
    const { text } = await call(id);
    if (!text.includes(ECHO_MARK)) throw new Error(`Unexpected answer: ${text}`);
  }
  const growth = (oldSpaceUsed() - before) / REQUESTS;
  agent.destroy();
  listener.close();
  await mcp.close();
  return growth;
}

if (process.argv[2] === "child") {
  process.stdout.write(`${await child(process.argv[3] as Era)}\n`);
} else {
  const self = fileURLToPath(import.meta.url);
  const growth: Record<Era, number[]> = { modern: [], legacy: [] };
  for (let run = 0; run < RUNS; run++) {
    for (const era of run % 2 === 0 ? ERAS : [...ERAS].reverse()) {
      const { stdout } = await promisify(execFile)(
        process.execPath,
        ["--expose-gc", "--import", "tsx", self, "child", era],
        { env: process.env },
      );
      growth[era].push(Number(stdout.trim()));
    }
  }
  console.log(
    `Node ${process.version}; ${WARM} requests to warm up, then ${REQUESTS}, ${RUNS} runs\n`,
  );
  console.log("| era | old-space growth per request, each run (B) | median (B) |");
  console.log("| --- | --- | ---: |");
  for (const era of ERAS) {
    const runs = growth[era].map((bytes) => bytes.toFixed(0)).join(", ");
    console.log(`| ${era} | ${runs} | ${median(growth[era]).toFixed(0)} |`);
  }
}
