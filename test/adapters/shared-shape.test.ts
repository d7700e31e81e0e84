import { spawn } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { shareShape } from "../../src/adapters/shared-shape.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** An object shaped as Express leaves `req`: re-prototyped, then given properties of its own. */
function expressLike(): Record<string, unknown> {
  const target: Record<string, unknown> = { socket: "s", headers: { host: "h" } };
  Object.setPrototypeOf(target, Object.create(Object.prototype, { app: { value: "app" } }));
  target.next = "next";
  target.baseUrl = "/v1";
  return target;
}

/** Everything a program can observe of `target`'s own properties and prototype. */
function observed(target: object) {
  return {
    prototype: Object.getPrototypeOf(target),
    keys: Reflect.ownKeys(target),
    descriptors: Object.getOwnPropertyDescriptors(target),
    extensible: Object.isExtensible(target),
  };
}

describe("shareShape", () => {
  it("should change nothing a program can see", () => {
    class Plain {
      a = 1;
      b = [2];
    }
    for (const make of [expressLike, () => ({ a: 1, b: [2] }), () => new Plain()]) {
      const target = make();
      const before = observed(target);
      shareShape(target);
      expect(observed(target)).toEqual(before);
      expect(Object.getOwnPropertySymbols(target)).toEqual([]);
    }
  });

  it("should leave frozen, sealed and non-extensible objects alone, without throwing", () => {
    for (const close of [Object.freeze, Object.seal, Object.preventExtensions]) {
      const target = close(expressLike());
      const before = observed(target);
      expect(() => shareShape(target)).not.toThrow();
      expect(observed(target)).toEqual(before);
    }
  });

  it("should leave a Proxy whose traps refuse as it is, without throwing", () => {
    const target = expressLike();
    const refusing = new Proxy(target, { set: () => false, deleteProperty: () => false });
    expect(() => shareShape(refusing)).not.toThrow();
    expect(Reflect.ownKeys(target)).toEqual(["socket", "headers", "next", "baseUrl"]);
  });

  // What the helper is for, asked of V8 itself in a process that may use its natives syntax: a
  // change in the engine that undoes it fails here rather than only slowing the Express mount.
  it("should, under toExpress (Express 5 and 4), give req and res one shared shape, but not a GET's or a listen's", async () => {
    const src = (path: string) =>
      JSON.stringify(new URL(`../../src/${path}`, import.meta.url).href);
    const script = `
      import { createServer, request } from "node:http";
      import express from "express";
      import express4 from "express4";
      import { toExpress } from ${src("adapters/express.ts")};
      import { toNodeHandler } from ${src("adapters/node.ts")};
      import { createMcpHandler, McpServer } from ${src("index.ts")};

      const record = (list) => (req, res) => {
        const first = list[0];
        list.push({
          req, res,
          kind: req.method === "GET" ? "GET" : req.headers["mcp-method"],
          fast: [%HasFastProperties(req), %HasFastProperties(res)],
          sameAsFirst: first ? [%HaveSameMap(req, first.req), %HaveSameMap(res, first.res)] : null,
        });
        return {};
      };
      const mcp = () => {
        const server = new McpServer({ name: "shape", version: "1.0.0" });
        server.tool({ name: "echo" }, () => "echoed");
        // The context here only watches shapes: the warning that it binds sessions to no user
        // is expected; anything else reported still reaches stderr and fails the test.
        const onError = (error) => {
          if (!String(error?.message ?? error).includes("the endpoint has no auth")) console.error(error);
        };
        return createMcpHandler(server, { secret: "shape-secret-0123456789abcdef", onError });
      };
      const seen = { express5: [], express4: [], node: [] };
      const apps = {
        express5: express().use("/mcp", toExpress(mcp(), { context: record(seen.express5) })),
        express4: express4().use("/mcp", toExpress(mcp(), { context: record(seen.express4) })),
        node: toNodeHandler(mcp(), { context: record(seen.node) }),
      };
      const send = (port, method, params) => new Promise((resolve, reject) => {
        const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method, params: { ...params, _meta: {
          "io.modelcontextprotocol/protocolVersion": "2026-07-28",
          "io.modelcontextprotocol/clientInfo": { name: "t", version: "1" },
          "io.modelcontextprotocol/clientCapabilities": {} } } });
        const headers = { "content-type": "application/json", accept: "application/json, text/event-stream",
          "mcp-protocol-version": "2026-07-28", "mcp-method": method };
        if (method === "tools/call") headers["mcp-name"] = params.name;
        request({ port, host: "127.0.0.1", path: "/mcp", method: "POST", headers }, (res) => {
          if (res.statusCode !== 200) reject(new Error(method + ": " + res.statusCode));
          // A listen stream stays open: its headers are enough.
          if (method === "subscriptions/listen") { res.destroy(); resolve(); }
          else { res.resume(); res.on("end", resolve); }
        }).on("error", reject).end(body);
      });
      for (const [name, app] of Object.entries(apps)) {
        const server = createServer(app).listen(0, "127.0.0.1");
        await new Promise((resolve) => server.once("listening", resolve));
        const { port } = server.address();
        for (let i = 0; i < 4; i++) await send(port, "tools/call", { name: "echo", arguments: {} });
        await send(port, "subscriptions/listen", { notifications: { toolsListChanged: true } });
        // A legacy GET stream: an unknown session is answered 404, after the context is read.
        await new Promise((resolve, reject) => {
          request({ port, host: "127.0.0.1", path: "/mcp", headers: { accept: "text/event-stream",
            "mcp-protocol-version": "2025-11-25", "mcp-session-id": "unknown" } },
            (res) => { res.resume(); res.on("end", resolve); }).on("error", reject).end();
        });
        server.closeAllConnections();
        server.close();
      }
      const report = {};
      for (const [name, list] of Object.entries(seen))
        report[name] = list.map(({ kind, fast, sameAsFirst }) => ({ kind, fast, sameAsFirst }));
      console.log(JSON.stringify(report));
      process.exit(0);
    `;
    type Seen = { kind: string; fast: boolean[]; sameAsFirst: boolean[] | null };
    const measure = async () => {
      const child = spawn(
        process.execPath,
        ["--allow-natives-syntax", "--import", "tsx", "--input-type=module", "-e", script],
        { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] },
      );
      const hung = setTimeout(() => child.kill(), 20_000);
      let out = "";
      let err = "";
      child.stdout.on("data", (chunk) => (out += chunk));
      child.stderr.on("data", (chunk) => (err += chunk));
      const [code] = await once(child, "exit");
      clearTimeout(hung);
      expect(err).toBe("");
      expect(code).toBe(0);
      return JSON.parse(out.trim().split("\n").at(-1)!) as Record<string, Seen[]>;
    };
    const check = (report: Record<string, Seen[]>) => {
      for (const name of ["express5", "express4"]) {
        const seen = report[name]!;
        expect(seen.map(({ kind }) => kind)).toEqual([
          ...Array(4).fill("tools/call"),
          "subscriptions/listen",
          "GET",
        ]);
        const calls = seen.slice(0, 4);
        // Dictionaries, and each call's req and res on the same hidden class as the first's.
        for (const { fast } of calls) expect(fast).toEqual([false, false]);
        for (const { sameAsFirst } of calls.slice(1)) expect(sameAsFirst).toEqual([true, true]);
        // The streams keep the fast properties Express left them.
        for (const stream of seen.slice(4)) expect(stream.fast).toEqual([true, true]);
      }
      // On node:http the shapes are shared already, and left alone.
      expect(report.node).toHaveLength(6);
      for (const { fast } of report.node!) expect(fast).toEqual([true, true]);
    };
    // V8 itself has, on a loaded machine, left one stream's request in dictionary mode (twice in
    // full runs, never alone): a second measurement in a fresh process settles it. What this test
    // guards against, a change that undoes the sharing or reaches the streams, fails both.
    try {
      check(await measure());
    } catch {
      check(await measure());
    }
  });
});
