import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { positive } from "./config.js";
import { fixed } from "./report.js";

// Instructions per `mcp.handle()` call, in process (`npm run bench:instructions:handle`; needs
// Debian's valgrind): the package's own work for a modern echo tools/call, with no socket and no
// host, beside a handler answering canned (what reading and parsing the body costs). Each loop
// (bench/handle-loop.ts) runs under callgrind twice, BENCH_CALLS_FEW and BENCH_CALLS_MANY calls,
// with V8 on one thread (`--single-threaded`) and a schedule of collections that does not depend
// on time (`--predictable-gc-schedule`); the difference of the two totals over the
// difference of the calls is what one more call costs, start-up and warm-up left out. The two
// handlers are counted side by side, one per core.

const few = Math.round(positive("BENCH_CALLS_FEW", 20_000));
const many = Math.round(positive("BENCH_CALLS_MANY", 80_000));
if (many <= few) throw new TypeError("BENCH_CALLS_MANY must be more than BENCH_CALLS_FEW");
const run = promisify(execFile);
const loop = fileURLToPath(new URL("./handle-loop.ts", import.meta.url));
const dir = mkdtempSync(join(tmpdir(), "mcp-mount-handle-"));

/** Total instructions of a process running `calls` calls through `handler`. */
async function total(handler: string, calls: number): Promise<number> {
  const out = join(dir, `${handler}.${calls}`);
  await run(
    "valgrind",
    [
      "--tool=callgrind",
      "--smc-check=all-non-file",
      `--callgrind-out-file=${out}`,
      process.execPath,
      "--single-threaded",
      // A schedule of collections that does not depend on valgrind's slowness (instructions.ts).
      ...(process.env.BENCH_V8_GC === "default" ? [] : ["--predictable-gc-schedule"]),
      "--import",
      import.meta.resolve("tsx"),
      loop,
    ],
    {
      env: {
        ...process.env,
        NODE_ENV: "production",
        BENCH_LOOP_HANDLER: handler,
        BENCH_LOOP_CALLS: String(calls),
      },
      maxBuffer: 64 * 1024 * 1024,
    },
  );
  const dump = readFileSync(out, "utf8");
  const totals = /^totals:\s+(\d+)/m.exec(dump) ?? /^summary:\s+(\d+)/m.exec(dump);
  if (!totals) throw new Error(`no totals in ${out}`);
  return Number(totals[1]);
}

async function perCall(handler: string): Promise<number> {
  const [a, b] = [await total(handler, few), await total(handler, many)];
  return (b - a) / (many - few);
}

// BENCH_HANDLERS=canned,mount,legacy adds a warm legacy session's calls (memory store).
const LABELS: Record<string, string> = {
  canned: "canned answer (reads and parses the body)",
  mount: "`mcp.handle()`, modern",
  legacy: "`mcp.handle()`, one warm legacy session",
};
const handlers = (process.env.BENCH_HANDLERS ?? "canned,mount").split(",");
for (const handler of handlers) {
  if (!(handler in LABELS)) throw new TypeError(`BENCH_HANDLERS: ${handler} is no handler`);
}

try {
  // Side by side, two at a time (one per core).
  const counts: Record<string, number> = {};
  for (let i = 0; i < handlers.length; i += 2) {
    const pair = handlers.slice(i, i + 2);
    const results = await Promise.all(pair.map(perCall));
    pair.forEach((handler, j) => {
      counts[handler] = results[j]!;
    });
  }
  console.log(
    `\nNode ${process.version}; instructions per call, from ${few} and ${many} calls in process\n`,
  );
  console.log("| handler | instructions per call | beyond canned |");
  console.log("| --- | ---: | ---: |");
  for (const handler of handlers) {
    const count = counts[handler]!;
    const beyond =
      counts.canned === undefined ? "" : `${fixed((count - counts.canned) / 1000, 1)} k`;
    console.log(`| ${LABELS[handler]} | ${fixed(count / 1000, 1)} k | ${beyond} |`);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
