import { execFile } from "node:child_process";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { median } from "../stats.js";

/** The package's entries a cold start may import, with their files under dist/. */
const ENTRIES = [
  { name: "mcp-mount", file: "index.js" },
  { name: "mcp-mount/express", file: "adapters/express.js" },
  { name: "mcp-mount/auth", file: "auth/index.js" },
  { name: "mcp-mount/client", file: "client/index.js" },
] as const;

/** How long importing one entry takes in a fresh process, and how much it loads. */
export interface EntryImport {
  name: string;
  /** Median milliseconds of the `import()` alone. */
  importMs: number;
  /** Modules loaded through the ESM loader. */
  modules: number;
  /** CommonJS files loaded (ajv is CommonJS, and what it requires never meets the ESM loader). */
  commonJs: number;
}

// Counts the modules the ESM loader loads, on its hooks thread, and hands the count over when
// the main thread asks (hooks and main thread share nothing else).
const HOOKS = `let count = 0;
export function initialize({ port }) { port.on("message", () => port.postMessage(count)); }
export async function load(url, context, next) { count++; return next(url, context); }`;

const script = (url: string) => `
import { createRequire, register } from "node:module";
const { port1, port2 } = new MessageChannel();
register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(HOOKS)}`)}, {
  data: { port: port2 }, transferList: [port2],
});
const started = performance.now();
await import(${JSON.stringify(url)});
const importMs = performance.now() - started;
port1.postMessage("count");
const commonJs = Object.keys(createRequire(import.meta.url).cache).length;
port1.once("message", (modules) => {
  console.log(JSON.stringify({ importMs, modules, commonJs }));
  port1.close();
});
`;

/** Imports each entry of the package at `root` in `reps` fresh processes. */
export async function entryImports(root: string, reps: number): Promise<EntryImport[]> {
  const rows: EntryImport[] = [];
  for (const { name, file } of ENTRIES) {
    const url = pathToFileURL(join(root, "dist", file)).href;
    const times: number[] = [];
    let counts = { modules: 0, commonJs: 0 };
    for (let rep = 0; rep < reps; rep++) {
      const { stdout } = await promisify(execFile)(process.execPath, [
        "--input-type=module",
        "--eval",
        script(url),
      ]);
      const { importMs, ...rest } = JSON.parse(stdout) as { importMs: number } & typeof counts;
      times.push(importMs);
      counts = rest;
    }
    rows.push({ name, importMs: median(times), ...counts });
  }
  return rows;
}
