import { gzipSync } from "node:zlib";
import { build, type Metafile } from "esbuild";

/** How large one entry is once an app's bundler has inlined everything it imports. */
export interface BundleSize {
  name: string;
  bytes: number;
  gzipBytes: number;
  /** The inputs that weigh most in the minified output, largest first, with their bytes. */
  largest: { input: string; bytes: number }[];
}

/** A Next.js App Router route as the README writes one, with the benchmarks' echo tool. */
const ROUTE = `
import { createMcpHandler, McpServer } from "mcp-mount";
import { toNextRoute } from "mcp-mount/next";
const server = new McpServer({ name: "notes", version: "1.0.0" });
server.tool(
  { name: "echo", input: { type: "object", properties: { text: { type: "string" } } } },
  ({ text }) => String(text),
);
export const { GET, POST, DELETE, OPTIONS } = toNextRoute(createMcpHandler(server));
`;

/**
 * Bundles `contents` (resolved from `root`, the package's directory) minified into one file,
 * for Node (a Next.js route on the Node.js runtime) or for the edge runtime, whose bundler picks
 * the `edge-light`/`worker`/`browser` conditions and fails on a Node built-in.
 */
async function measureBundle(
  name: string,
  root: string,
  contents: string,
  runtime: "node" | "edge",
): Promise<BundleSize> {
  const edge = runtime === "edge";
  const result = await build({
    stdin: { contents, resolveDir: root, sourcefile: "route.ts", loader: "ts" },
    bundle: true,
    minify: true,
    write: false,
    metafile: true,
    format: "esm",
    platform: edge ? "browser" : "node",
    conditions: edge ? ["edge-light", "worker", "browser"] : [],
    logLevel: "silent",
  });
  const code = result.outputFiles[0]!.contents;
  return {
    name,
    bytes: code.byteLength,
    gzipBytes: gzipSync(code).byteLength,
    largest: largestInputs(result.metafile),
  };
}

function largestInputs(metafile: Metafile): { input: string; bytes: number }[] {
  const byPackage = new Map<string, number>();
  for (const output of Object.values(metafile.outputs)) {
    for (const [input, { bytesInOutput }] of Object.entries(output.inputs)) {
      const dependency = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(input)?.[1];
      const key = dependency ?? "mcp-mount";
      byPackage.set(key, (byPackage.get(key) ?? 0) + bytesInOutput);
    }
  }
  return [...byPackage]
    .map(([input, bytes]) => ({ input, bytes }))
    .sort((a, b) => b.bytes - a.bytes)
    .slice(0, 6);
}

/** The Next.js route's bundle for the Node.js runtime and for the edge runtime. */
export function bundleSizes(root: string): Promise<BundleSize[]> {
  return Promise.all([
    measureBundle("Next.js route, Node.js runtime", root, ROUTE, "node"),
    measureBundle("Next.js route, edge runtime", root, ROUTE, "edge"),
  ]);
}
