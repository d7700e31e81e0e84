import { context } from "@opentelemetry/api";
import { inProcessRequest } from "./request.js";
import { telemetryHandler } from "./servers/telemetry-mode.js";

// One telemetry mode's CPU per `mcp.handle()` of an echo tools/call, no socket: the package's
// own work and the SDK's, without the HTTP stack's (which dwarfs and blurs them). Run by
// bench/telemetry.ts in a fresh process per mode and rep; prints the least CPU per call, in µs,
// over five runs of BENCH_HANDLE_REQUESTS calls after one to warm up.

const requests = Number(process.env.BENCH_HANDLE_REQUESTS ?? 20_000);
const { mcp, sdkRegistered } = telemetryHandler(process.argv[2]);
/** CPU per call, in µs; each call in its own async context when an SDK is registered, as an app's. */
async function cpuPerCall(): Promise<number> {
  const start = process.cpuUsage();
  for (let i = 0; i < requests; i++) {
    const handle = () => mcp.handle(inProcessRequest(i));
    const response = await (sdkRegistered ? context.with(context.active(), handle) : handle());
    if (response.status !== 200) throw new Error(`handle answered ${response.status}`);
  }
  const used = process.cpuUsage(start);
  return (used.user + used.system) / requests;
}

await cpuPerCall();
const runs: number[] = [];
for (let run = 0; run < 5; run++) runs.push(await cpuPerCall());
process.stdout.write(`${Math.min(...runs)}\n`);
process.exit(0);
