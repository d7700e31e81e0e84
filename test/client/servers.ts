import { createMcpHandler, type McpHandler, type McpServer } from "../../src/index.js";
import type { McpClientOptions } from "../../src/client/index.js";
import { createFixtureServer } from "../helpers/fixture-server.js";
import { type Mounted, mount, type TransportName } from "../helpers/transports.js";

/** Our server, mounted one way, with what a client needs to reach it. */
export interface OurServer {
  server: McpServer;
  mcp: McpHandler;
  url: string;
  /** Client options that reach the mount: a fetch into the handler when it has no socket. */
  reach: Pick<McpClientOptions, "fetch" | "eraCache">;
  close(): Promise<void>;
}

/** Starts the fixture server (or `server`) through `transport`, legacy era on unless told. */
export async function startOurServer(
  transport: TransportName,
  options: {
    legacy?: boolean | { stateless?: boolean };
    server?: McpServer;
    /** Receives the method of every request the server serves. */
    seen?: string[];
  } = {},
): Promise<OurServer> {
  const server = options.server ?? createFixtureServer();
  const mcp = createMcpHandler(server, {
    secret: "client-tests",
    legacy: options.legacy ?? true,
    onRequest: (info) => options.seen?.push(info.method),
  });
  const mounted: Mounted = await mount(transport, mcp);
  const reach: OurServer["reach"] = { eraCache: new Map() };
  if (transport === "fetch") reach.fetch = (input, init) => mcp.fetch(new Request(input, init));
  return { server, mcp, url: mounted.url, reach, close: () => mounted.close() };
}
