import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createMcpHandler } from "../../src/index.js";
import { createFixtureServer } from "../helpers/fixture-server.js";
import { LEGACY_VERSION, legacyHeaders, openSession } from "../helpers/legacy.js";
import { TestOtel } from "../helpers/otel.js";
import { type Mounted, mount } from "../helpers/transports.js";

// mcp.server.session.duration: a legacy session's life, recorded when it ends here (DELETE).
describe("mcp.server.session.duration", () => {
  const otel = new TestOtel();
  let mounted: Mounted;
  beforeAll(async () => {
    mounted = await mount(
      "node",
      createMcpHandler(createFixtureServer(), { telemetry: otel.providers }),
    );
  });
  afterAll(() => mounted.close());

  it("should record a deleted session's duration with the conventions' attributes", async () => {
    expect(await otel.histogram("mcp.server.session.duration")).toHaveLength(0);
    const session = await openSession(mounted.send);
    const deleted = await mounted.send({ method: "DELETE", headers: legacyHeaders(session) });
    expect(deleted.status).toBe(200);
    const points = await otel.histogram("mcp.server.session.duration");
    expect(points).toHaveLength(1);
    expect(points[0]!.attributes).toEqual({
      "mcp.protocol.version": LEGACY_VERSION,
      "network.transport": "tcp",
      "network.protocol.name": "http",
    });
    expect(points[0]!.value.count).toBe(1);
    expect(points[0]!.value.sum).toBeGreaterThanOrEqual(0);
    expect(points[0]!.value.sum).toBeLessThan(60);
  });
});
