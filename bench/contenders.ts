import { fileURLToPath } from "node:url";

/** The servers the benchmark compares, in report order. */
export const CONTENDER_IDS = ["bare", "sdk", "tmcp", "mcp-mount"] as const;

/** One of {@link CONTENDER_IDS}. */
export type ContenderId = (typeof CONTENDER_IDS)[number];

/** A server under test: what to start and how to name it in the report. */
export interface Contender {
  id: ContenderId;
  label: string;
  /** Absolute path of the module the child process runs. */
  entry: string;
}

const entry = (file: string) => fileURLToPath(new URL(`./servers/${file}`, import.meta.url));

/** Every contender, by id. */
export const CONTENDERS: Record<ContenderId, Contender> = {
  bare: { id: "bare", label: "bare node:http", entry: entry("bare.ts") },
  sdk: { id: "sdk", label: "official SDK v2", entry: entry("sdk.ts") },
  tmcp: { id: "tmcp", label: "tmcp", entry: entry("tmcp.ts") },
  "mcp-mount": { id: "mcp-mount", label: "mcp-mount", entry: entry("mcp-mount.ts") },
};

/** True when `value` names a contender. */
export function isContenderId(value: string): value is ContenderId {
  return (CONTENDER_IDS as readonly string[]).includes(value);
}
