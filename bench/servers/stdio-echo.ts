import { serveStdio } from "mcp-mount/stdio";
import { createEchoServer } from "./echo-server.js";

// The gateway benchmark's upstream: the benchmarks' echo tool over stdio, from the built dist.
// `npm run bench:gateway` reaches it directly, through `mcp-mount serve` and through mcp-proxy.
serveStdio(createEchoServer("bench-stdio-echo"));
