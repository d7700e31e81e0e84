import { fileURLToPath } from "node:url";
import { legacyWorkload, modernWorkload, type Workload } from "./workload.js";

/** Every server the benchmark knows, in report order. */
export const CONTENDER_IDS = [
  "bare",
  "bare-express",
  "bare-express-dictionaries",
  "sdk",
  "tmcp",
  "mcp-mount",
  "mcp-mount-express",
  "express-adapter",
  "mcp-mount-legacy",
  "sdk-v1",
  "node-adapter",
  "mcp-mount-no-telemetry",
  "mcp-mount-no-schema",
] as const;

/** One of {@link CONTENDER_IDS}. */
export type ContenderId = (typeof CONTENDER_IDS)[number];

/** Which traffic a run sends: modern tools/call (`npm run bench`) or legacy sessions (`bench:legacy`). */
export type BenchEra = "modern" | "legacy";

/** The servers each era's run compares unless BENCH_SERVERS says otherwise. */
export const ERA_CONTENDERS: Record<BenchEra, readonly ContenderId[]> = {
  modern: ["bare", "sdk", "tmcp", "mcp-mount"],
  // Our modern path runs beside the legacy one, so both figures come from the same minutes.
  legacy: ["bare", "mcp-mount", "mcp-mount-legacy", "sdk-v1"],
};

/** Where the modern run mounts the servers: node:http, or Express beside it (`BENCH_HOST=express`). */
export type BenchHost = "node" | "express";

/** The modern run's servers with BENCH_HOST=express: each mount beside its own bare ceiling. */
export const EXPRESS_CONTENDERS: readonly ContenderId[] = [
  "bare",
  "bare-express",
  "mcp-mount",
  "mcp-mount-express",
];

/** A server under test: what to start, what to send it, and how to name it in the report. */
export interface Contender {
  id: ContenderId;
  label: string;
  /** Absolute path of the module the child process runs. */
  entry: string;
  workload: Workload;
}

const entry = (file: string) => fileURLToPath(new URL(`./servers/${file}`, import.meta.url));

/** Every contender, by id. */
export const CONTENDERS: Record<ContenderId, Contender> = {
  bare: { id: "bare", label: "bare node:http", entry: entry("bare.ts"), workload: modernWorkload },
  "bare-express": {
    id: "bare-express",
    label: "bare Express 5",
    entry: entry("bare-express.ts"),
    workload: modernWorkload,
  },
  "bare-express-dictionaries": {
    id: "bare-express-dictionaries",
    label: "bare Express 5, req/res made dictionaries",
    entry: entry("bare-express-dictionaries.ts"),
    workload: modernWorkload,
  },
  sdk: { id: "sdk", label: "official SDK v2", entry: entry("sdk.ts"), workload: modernWorkload },
  tmcp: { id: "tmcp", label: "tmcp", entry: entry("tmcp.ts"), workload: modernWorkload },
  "mcp-mount": {
    id: "mcp-mount",
    label: "mcp-mount",
    entry: entry("mcp-mount.ts"),
    workload: modernWorkload,
  },
  "mcp-mount-express": {
    id: "mcp-mount-express",
    label: "mcp-mount on Express",
    entry: entry("mcp-mount-express.ts"),
    workload: modernWorkload,
  },
  "express-adapter": {
    id: "express-adapter",
    label: "Express adapter, canned answer",
    entry: entry("express-adapter.ts"),
    workload: modernWorkload,
  },
  "mcp-mount-legacy": {
    id: "mcp-mount-legacy",
    label: "mcp-mount legacy",
    entry: entry("mcp-mount.ts"),
    workload: legacyWorkload,
  },
  "sdk-v1": {
    id: "sdk-v1",
    label: "official SDK v1",
    entry: entry("sdk-v1.ts"),
    workload: legacyWorkload,
  },
  // What each part of the mount costs, by difference (BENCH_SERVERS=…, bench:instructions).
  "node-adapter": {
    id: "node-adapter",
    label: "toNodeHandler, canned answer",
    entry: entry("node-adapter.ts"),
    workload: modernWorkload,
  },
  "mcp-mount-no-telemetry": {
    id: "mcp-mount-no-telemetry",
    label: "mcp-mount, telemetry: false",
    entry: entry("mcp-mount-no-telemetry.ts"),
    workload: modernWorkload,
  },
  "mcp-mount-no-schema": {
    id: "mcp-mount-no-schema",
    label: "mcp-mount, telemetry: false, no input schema",
    entry: entry("mcp-mount-no-schema.ts"),
    workload: modernWorkload,
  },
};

/** True when `value` names a contender. */
export function isContenderId(value: string): value is ContenderId {
  return (CONTENDER_IDS as readonly string[]).includes(value);
}
