import type { RequestListener, ServerResponse } from "node:http";
import type { McpHandler, McpHttpRequest } from "mcp-mount";

// The ceilings' answer: the echo tools/call result with the request's id, canned, sized, and no
// MCP machinery at all (bare.ts, bare-express.ts, express-adapter.ts, in-process.ts).
const PREFIX = '{"jsonrpc":"2.0","id":';
const SUFFIX = ',"result":{"content":[{"type":"text","text":"hello"}],"resultType":"complete"}}';

/** The canned result's JSON text for request `id`. */
export function cannedBody(id: unknown): string {
  return PREFIX + JSON.stringify(id) + SUFFIX;
}

/** Answers `res` with the canned result for request `id`, with a Content-Length. */
export function answerCanned(res: ServerResponse, id: unknown): void {
  const body = cannedBody(id);
  res.writeHead(200, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(body),
  });
  res.end(body);
}

/** Reads and parses the body as a plain JSON responder does, then answers it canned. */
export const cannedListener: RequestListener = (req, res) => {
  const chunks: Buffer[] = [];
  req.on("data", (chunk: Buffer) => chunks.push(chunk));
  req.on("end", () => {
    answerCanned(res, (JSON.parse(Buffer.concat(chunks).toString("utf8")) as { id: unknown }).id);
  });
};

/**
 * In place of `createMcpHandler(...)`: reads the body through the adapter's request and answers
 * canned, so an adapter mounted on it costs its own work and no more.
 */
export const cannedMcp = {
  async handle(req: McpHttpRequest) {
    const body = await req.body(4 * 1024 * 1024);
    // Parsed already when express.json() ran first (BENCH_EXPRESS_JSON=1).
    if (body.kind !== "text" && body.kind !== "parsed") throw new Error(`body: ${body.kind}`);
    const { id } = (body.kind === "text" ? JSON.parse(body.text) : body.value) as { id: unknown };
    return { status: 200, headers: { "content-type": "application/json" }, body: cannedBody(id) };
  },
} as unknown as McpHandler;
