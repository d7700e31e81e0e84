import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { appAuth } from "../../src/auth/index.js";
import type { RequestInfo } from "../../src/index.js";
import {
  type App,
  type AppMounted,
  as,
  contextCalls,
  mountWithContext,
  TASK_CAPABILITIES,
} from "../helpers/app-server.js";
import { legacyCall, openSession } from "../helpers/legacy.js";
import { call, modernHeaders, modernMeta, readExchange, type Send } from "../helpers/modern.js";
import { TRANSPORTS } from "../helpers/transports.js";

describe.each(TRANSPORTS)("the app's context per request (%s)", (transport) => {
  let mounted: AppMounted;
  const requests: RequestInfo<App>[] = [];
  const errors: { error: unknown; app?: App }[] = [];
  beforeAll(async () => {
    mounted = await mountWithContext(transport, {
      onRequest: (info) => requests.push(info),
      onError: (error, { app }) => errors.push({ error, app }),
    });
  });
  afterAll(() => mounted.close());

  it("should reach tools in both eras, computed once per HTTP request", async () => {
    const before = contextCalls;
    const modern = await call(
      mounted.send,
      "tools/call",
      { name: "whoami", arguments: {} },
      {
        headers: as("ada", { "x-request-id": "r-1" }),
      },
    );
    expect(modern.result.structuredContent).toEqual({
      user: "ada",
      requestId: "r-1",
      principal: null,
    });
    expect(contextCalls - before).toBe(1);
    const session = await openSession(mounted.send);
    const legacy = await legacyCall(
      mounted.send,
      session,
      "tools/call",
      { name: "whoami", arguments: {} },
      as("bob"),
    );
    expect(legacy.result.structuredContent).toMatchObject({ user: "bob" });
  });

  it("should reach prompts, resources, templates and completions", async () => {
    const headers = as("ada");
    const prompt = await call(
      mounted.send,
      "prompts/get",
      { name: "greet", arguments: {} },
      { headers },
    );
    expect(JSON.stringify(prompt.result)).toContain("Hello ada");
    const resource = await call(mounted.send, "resources/read", { uri: "app://me" }, { headers });
    expect(resource.result.contents).toEqual([{ uri: "app://me", text: "me=ada" }]);
    const template = await call(
      mounted.send,
      "resources/read",
      { uri: "app://users/eve" },
      { headers },
    );
    expect(template.result.contents).toEqual([{ uri: "app://users/eve", text: "eve seen by ada" }]);
    const completion = await call(
      mounted.send,
      "completion/complete",
      {
        ref: { type: "ref/resource", uri: "app://users/{name}" },
        argument: { name: "name", value: "e" },
      },
      { headers },
    );
    expect(completion.result.completion).toMatchObject({ values: ["ada-e"] });
  });

  it("should be computed again for a multi round-trip retry, carrying nothing over", async () => {
    const first = await call(
      mounted.send,
      "tools/call",
      { name: "ask", arguments: {} },
      {
        capabilities: { elicitation: {} },
        headers: as("ada", { "x-request-id": "round-1" }),
      },
    );
    expect(first.result.resultType).toBe("input_required");
    const retry = await call(
      mounted.send,
      "tools/call",
      {
        name: "ask",
        arguments: {},
        inputResponses: { ok: { action: "accept", content: {} } },
        requestState: first.result.requestState,
      },
      { capabilities: { elicitation: {} }, headers: as("ada", { "x-request-id": "round-2" }) },
    );
    expect(retry.result.structuredContent).toEqual({ action: "accept", requestId: "round-2" });
  });

  it("should reach a task's work", async () => {
    const started = await call(
      mounted.send,
      "tools/call",
      { name: "job", arguments: {} },
      {
        capabilities: TASK_CAPABILITIES,
        headers: as("ada"),
      },
    );
    expect(started.result.resultType).toBe("task");
    const taskId = started.result.taskId as string;
    await expect
      .poll(async () => {
        const polled = await call(
          mounted.send,
          "tasks/get",
          { taskId },
          {
            capabilities: TASK_CAPABILITIES,
            headers: as("ada", { "mcp-name": taskId }),
          },
        );
        return (polled.result as { result?: { structuredContent?: unknown } }).result
          ?.structuredContent;
      })
      .toEqual({ user: "ada" });
  });

  it("should reach the onRequest and onError hooks", async () => {
    requests.length = 0;
    errors.length = 0;
    const failed = await call(
      mounted.send,
      "tools/call",
      { name: "fails", arguments: {} },
      {
        headers: as("mallory", { "x-request-id": "r-err" }),
      },
    );
    expect(failed.result.isError).toBe(true);
    await expect
      .poll(() => requests.find((info) => info.name === "fails")?.app)
      .toEqual({
        user: "mallory",
        requestId: "r-err",
      });
    expect(errors.map(({ error, app }) => [String(error), app?.user])).toContainEqual([
      "Error: failed for mallory",
      "mallory",
    ]);
  });

  it("should answer 500 with a JSON-RPC body when the context throws, and report it", async () => {
    errors.length = 0;
    const response = await mounted.send({
      method: "POST",
      headers: { ...modernHeaders("tools/list"), "x-fail": "1" },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "tools/list",
        params: { _meta: modernMeta() },
      }),
    });
    const { status, error } = readExchange(response, "tools/list");
    expect(status).toBe(500);
    expect(error).toEqual({ code: -32603, message: "Internal error" });
    expect(errors.map(({ error }) => String(error))).toEqual(["Error: the session store is down"]);
  });
});

describe.each(TRANSPORTS)("the app's context behind a trusted proxy (%s)", (transport) => {
  let mounted: AppMounted;
  beforeAll(async () => {
    mounted = await mountWithContext(transport, {
      trustProxy: true,
      allowedHosts: ["mcp.example.com"],
    });
  });
  afterAll(() => mounted.close());

  it("should still reach handlers when forwarded headers rewrite the request", async () => {
    const forwarded = { "x-forwarded-host": "mcp.example.com", "x-forwarded-proto": "https" };
    const send: Send = (request) =>
      mounted.send({ ...request, headers: { ...request.headers, ...forwarded } });
    const modern = await call(
      send,
      "tools/call",
      { name: "whoami", arguments: {} },
      { headers: as("ada", { "x-request-id": "r-9" }) },
    );
    expect(modern.result.structuredContent).toEqual({
      user: "ada",
      requestId: "r-9",
      principal: null,
    });
    const session = await openSession(send);
    const legacy = await legacyCall(
      send,
      session,
      "tools/call",
      { name: "whoami", arguments: {} },
      as("bob"),
    );
    expect(legacy.result.structuredContent).toMatchObject({ user: "bob" });
  });
});

describe.each(["node", "express"] as const)(
  "the app's context on an endpoint without auth (%s)",
  (transport) => {
    const opened: AppMounted[] = [];
    const mountAs = async (options: Parameters<typeof mountWithContext>[1]) => {
      const mounted = await mountWithContext(transport, options);
      opened.push(mounted);
      return mounted;
    };
    afterEach(async () => {
      vi.restoreAllMocks();
      await Promise.all(opened.splice(0).map((mounted) => mounted.close()));
    });
    const twice = async (send: Send) => {
      for (const user of ["ada", "bob"])
        expect((await call(send, "tools/list", {}, { headers: as(user) })).status).toBe(200);
    };

    it("should warn once, through onError, that sessions, tasks and requestState are bound to nobody", async () => {
      const errors: unknown[] = [];
      const mounted = await mountAs({ onError: (error) => errors.push(error) });
      await twice(mounted.send);
      expect(errors.map(String)).toEqual([expect.stringMatching(/no auth.*appAuth/)]);
    });

    it("should warn once on the console when the app has no onError", async () => {
      const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
      const mounted = await mountAs({});
      await twice(mounted.send);
      expect(warn).toHaveBeenCalledTimes(1);
      expect(String(warn.mock.calls[0]?.[0])).toMatch(/bound to no user/);
    });

    it("should not warn when auth binds them to the app's user", async () => {
      const errors: unknown[] = [];
      const mounted = await mountAs({
        auth: appAuth<App>((_req, app) => (app.user ? { subject: app.user } : undefined)),
        onError: (error) => errors.push(error),
      });
      await twice(mounted.send);
      expect(errors).toEqual([]);
    });
  },
);
