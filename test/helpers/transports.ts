import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import express from "express";
import { toExpress, toExpressMetadata } from "../../src/adapters/express.js";
import { toNodeHandler } from "../../src/adapters/node.js";
import type { McpHandler } from "../../src/index.js";
import { type Send, viaFetch, viaUrl } from "./modern.js";

/** A handler mounted one way, ready for requests. */
export interface Mounted {
  send: Send;
  /** The endpoint URL when served over a real socket. */
  url: string;
  /** A `Send` to another URL of the same app (the metadata document, say). */
  at(url: string): Send;
  close(): Promise<void>;
}

/** The ways a handler is mounted; every HTTP suite runs through each of them. */
export const TRANSPORTS = ["fetch", "node", "express"] as const;
export type TransportName = (typeof TRANSPORTS)[number];

async function listen(server: Server, path: string): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`;
}

function closer(server: Server, mcp: McpHandler): () => Promise<void> {
  return async () => {
    await mcp.close();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
}

/** Mounts `mcp` through the named transport. */
export async function mount(name: TransportName, mcp: McpHandler): Promise<Mounted> {
  if (name === "fetch") {
    const url = "http://127.0.0.1/mcp";
    return {
      send: viaFetch(mcp.fetch, url),
      url,
      at: (other) => viaFetch(mcp.fetch, other),
      close: () => mcp.close(),
    };
  }
  if (name === "node") {
    const server = createServer(toNodeHandler(mcp));
    const url = await listen(server, "/mcp");
    return { send: viaUrl(url), url, at: viaUrl, close: closer(server, mcp) };
  }
  const app = express();
  app.use(toExpressMetadata(mcp));
  const router = express.Router();
  router.use("/mcp", toExpress(mcp));
  app.use("/api", router);
  const server = createServer(app);
  const url = await listen(server, "/api/mcp");
  return { send: viaUrl(url), url, at: viaUrl, close: closer(server, mcp) };
}
