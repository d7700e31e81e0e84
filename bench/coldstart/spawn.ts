import { spawn } from "node:child_process";
import { once } from "node:events";
import { request } from "node:http";
import { createInterface } from "node:readline";
import { MCP_PATH, REQUEST_HEADERS, requestBody, verifyEchoResponse } from "../request.js";
import type { ColdMessage } from "./listen.js";

/** One cold start, in milliseconds: the child's own clock (from its process start) and ours. */
export interface ColdStart {
  /** The child's imports done. */
  importedMs: number;
  /** Its server built and listening. */
  listeningMs: number;
  /** Its first tools/call answered (the response written). */
  answeredMs: number;
  /** From our spawn() to the answer read here: what a caller waiting on a cold start sees. */
  wallMs: number;
  /**
   * The child's CPU time (user + system) until its answer: on a shared machine, where waiting
   * for a core stretches every wall-clock figure, the steadier measure of the work done.
   */
  cpuMs: number;
}

const RUN_TIMEOUT_MS = 30_000;

/**
 * Runs `file` (built JavaScript) in a fresh `node`, sends it one modern tools/call as soon as it
 * listens, checks the answer, and ends it. Throws if any step fails or takes over 30 s.
 */
export async function coldStart(file: string): Promise<ColdStart> {
  const started = performance.now();
  const child = spawn(process.execPath, [file], {
    stdio: ["pipe", "pipe", "inherit"],
    env: { ...process.env, NODE_ENV: "production" },
  });
  const timer = setTimeout(() => child.kill("SIGKILL"), RUN_TIMEOUT_MS);
  const exited = once(child, "exit");
  try {
    const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
    const next = async (): Promise<ColdMessage> => {
      const { value, done } = await lines.next();
      if (done) throw new Error(`${file} exited before it answered`);
      return JSON.parse(value) as ColdMessage;
    };
    const listening = await next();
    if (listening.kind !== "listening") throw new Error(`${file}: expected "listening" first`);
    const { status, contentType, text } = await callEcho(listening.port);
    const wallMs = performance.now() - started;
    verifyEchoResponse(1, status, contentType, text);
    const answered = await next();
    if (answered.kind !== "answered") throw new Error(`${file}: expected "answered"`);
    const { importedMs, listeningMs } = listening;
    const { answeredMs, cpuMs } = answered;
    return { importedMs, listeningMs, answeredMs, wallMs, cpuMs };
  } finally {
    child.stdin.end();
    await exited;
    clearTimeout(timer);
  }
}

/** The modern echo tools/call with id 1 on a connection of its own. */
function callEcho(port: number): Promise<{ status: number; contentType: string; text: string }> {
  return new Promise((resolve, reject) => {
    const body = requestBody(1);
    const req = request(
      {
        host: "127.0.0.1",
        port,
        path: MCP_PATH,
        method: "POST",
        agent: false,
        headers: { ...REQUEST_HEADERS, "content-length": Buffer.byteLength(body) },
      },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => {
          text += chunk;
        });
        res.once("end", () =>
          resolve({
            status: res.statusCode ?? 0,
            contentType: res.headers["content-type"] ?? "",
            text,
          }),
        );
        res.once("error", reject);
      },
    );
    req.once("error", reject);
    req.end(body);
  });
}
