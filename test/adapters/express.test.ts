import express from "express";
// Express 4 is installed under an alias so both majors are tested against the same adapter.
import express4 from "express4";
import request from "supertest";
import { describe, expect, it } from "vitest";
import { toExpress } from "../../src/adapters/express.js";
import { createMcpHandler } from "../../src/index.js";
import { createFixtureServer } from "../helpers/fixture-server.js";
import { modernHeaders, modernMeta, parseSse } from "../helpers/modern.js";
import { assertModernMessage } from "../helpers/spec.js";

type AppFactory = () => express.Express;
type JsonParser = () => express.RequestHandler;
// Each major with its own body parser: body-parser 2 (Express 5) sets req.body, 1 (Express 4)
// req.body and req._body; the adapter must see both as a consumed stream.
const FRAMEWORKS: [string, AppFactory, JsonParser][] = [
  ["Express 5", () => express(), () => express.json()],
  [
    "Express 4",
    () => express4() as unknown as express.Express,
    () => express4.json() as unknown as express.RequestHandler,
  ],
];

function body(
  method: string,
  params: Record<string, unknown> = {},
  meta: Record<string, unknown> = {},
) {
  return { jsonrpc: "2.0", id: 1, method, params: { ...params, _meta: modernMeta({}, meta) } };
}

describe.each(FRAMEWORKS)("toExpress on %s (supertest)", (_label, createApp, json) => {
  const build = (options: { json?: boolean; path?: string } = {}) => {
    const app = createApp();
    if (options.json) app.use(json());
    const mcp = createMcpHandler(createFixtureServer(), { secret: "s" });
    const router = express.Router();
    router.use(options.path ?? "/mcp", toExpress(mcp));
    app.use("/v1", router);
    app.get("/v1/mcp/health", (_req, res) => {
      res.send("app route");
    });
    return app;
  };

  it("should serve tools/call when mounted under a router", async () => {
    const response = await request(build())
      .post("/v1/mcp")
      .set(modernHeaders("tools/call", "echo"))
      .send(body("tools/call", { name: "echo", arguments: { text: "hi" } }));
    expect(response.status).toBe(200);
    assertModernMessage(response.body, "tools/call");
    expect(response.body.result.content).toEqual([{ type: "text", text: "hi" }]);
  });

  it("should work after express.json() consumed the body", async () => {
    const response = await request(build({ json: true }))
      .post("/v1/mcp")
      .set(modernHeaders("tools/call", "echo"))
      .send(body("tools/call", { name: "echo", arguments: { text: "parsed" } }));
    expect(response.status).toBe(200);
    expect(response.body.result.content).toEqual([{ type: "text", text: "parsed" }]);
  });

  it("should stream SSE through Express", async () => {
    const response = await request(build())
      .post("/v1/mcp")
      .set(modernHeaders("tools/call", "steps"))
      .send(body("tools/call", { name: "steps", arguments: {} }, { progressToken: 1 }))
      .buffer(true)
      .parse((res, done) => {
        let text = "";
        res.on("data", (chunk: Buffer) => {
          text += chunk.toString();
        });
        res.on("end", () => done(null, text));
      });
    expect(response.headers["content-type"]).toBe("text/event-stream");
    const messages = parseSse(response.body as string) as Record<string, unknown>[];
    for (const message of messages) assertModernMessage(message, "tools/call");
    expect(messages.map((m) => m.method ?? "response")).toEqual([
      "notifications/progress",
      "notifications/progress",
      "response",
    ]);
  });

  it("should leave deeper paths to the app", async () => {
    const response = await request(build()).get("/v1/mcp/health");
    expect(response.text).toBe("app route");
  });

  it("should serve the mount path with a query string and with a trailing slash", async () => {
    for (const path of ["/v1/mcp?trace=1", "/v1/mcp/"]) {
      const response = await request(build())
        .post(path)
        .set(modernHeaders("tools/call", "echo"))
        .send(body("tools/call", { name: "echo", arguments: { text: path } }));
      expect(response.status).toBe(200);
      expect(response.body.result.content).toEqual([{ type: "text", text: path }]);
    }
  });

  it("should answer bad input with a JSON-RPC error and keep serving", async () => {
    const app = build();
    const malformed = await request(app)
      .post("/v1/mcp")
      .set(modernHeaders("tools/list"))
      .send("{oops");
    expect(malformed.status).toBe(400);
    expect(malformed.body.error.code).toBe(-32700);
    const wrongType = await request(app)
      .post("/v1/mcp")
      .set({ ...modernHeaders("tools/list"), "content-type": "text/plain" })
      .send("hello");
    expect(wrongType.status).toBe(415);
    // A GET belongs to a legacy session: without one it is a bad request.
    const get = await request(app).get("/v1/mcp").set("accept", "text/event-stream");
    expect(get.status).toBe(400);
    expect(get.body.error.code).toBe(-32600);
    const ok = await request(app)
      .post("/v1/mcp")
      .set(modernHeaders("tools/list"))
      .send(body("tools/list"));
    expect(ok.status).toBe(200);
  });
});
