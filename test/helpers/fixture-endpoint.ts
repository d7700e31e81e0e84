import { afterAll, beforeAll } from "vitest";
import {
  createMcpHandler,
  type McpHandler,
  type McpHandlerOptions,
  type McpServer,
} from "../../src/index.js";
import { createFixtureServer, type Probe } from "./fixture-server.js";
import type { Send } from "./modern.js";
import { type Mounted, mount, type TransportName } from "./transports.js";

/** The fixture server mounted for one suite. */
export interface FixtureEndpoint {
  readonly probe: Probe;
  readonly server: McpServer;
  /** Set once the suite has started (in `beforeAll`). */
  readonly mcp: McpHandler;
  /** Set once the suite has started (in `beforeAll`). */
  readonly mounted: Mounted;
  /** Sends through the mounted endpoint; may be taken before the suite starts. */
  readonly send: Send;
}

/**
 * Mounts the fixture server through `transport` for the calling suite, once for all its tests:
 * started in `beforeAll`, closed in `afterAll`.
 */
export function suiteFixtureEndpoint(
  transport: TransportName,
  options: McpHandlerOptions,
): FixtureEndpoint {
  const probe: Probe = { aborted: [], started: [] };
  const server = createFixtureServer(probe);
  let started: { mcp: McpHandler; mounted: Mounted } | undefined;
  const running = () => {
    if (!started) throw new Error("The fixture endpoint starts in beforeAll");
    return started;
  };
  beforeAll(async () => {
    const mcp = createMcpHandler(server, options);
    started = { mcp, mounted: await mount(transport, mcp) };
  });
  afterAll(() => running().mounted.close());
  return {
    probe,
    server,
    get mcp() {
      return running().mcp;
    },
    get mounted() {
      return running().mounted;
    },
    send: (request) => running().mounted.send(request),
  };
}
