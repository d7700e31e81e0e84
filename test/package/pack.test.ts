import { type ChildProcess, execFile, spawn } from "node:child_process";
import { cp, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

// The package as users get it: packed from a tree with no dist (as a fresh clone is), installed
// from the tarball into new projects, typechecked with the consumer's settings and run.

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const TSC = join(ROOT, "node_modules/.bin/tsc");
const SECRET = "pack-test-secret";
const INSTALL = ["install", "--no-audit", "--no-fund", "--prefer-offline", "--loglevel=warn"];
const SLOW = 180_000;

/** Node runs `require()` of an ES module without a flag from 20.19 and 22.12 on. */
const canRequireEsm = (process.features as { require_module?: boolean }).require_module === true;

// An `npm test` parent exports npm_config_local_prefix and friends, which would point the
// child npm at this repository instead of the temporary project.
const childEnv = Object.fromEntries(
  Object.entries(process.env).filter(([key]) => !key.toLowerCase().startsWith("npm_")),
);

const exec = promisify(execFile);
const children = new Set<ChildProcess>();
let work: string;

/** Runs a command to completion; a failure carries everything it printed. */
async function run(command: string, args: string[], cwd: string) {
  try {
    return await exec(command, args, { cwd, env: childEnv, maxBuffer: 64 * 1024 * 1024 });
  } catch (error) {
    const { stdout, stderr } = error as { stdout?: string; stderr?: string };
    throw new Error(`${command} ${args.join(" ")} failed in ${cwd}:\n${stdout}\n${stderr}`);
  }
}

/** A version this repository's lockfile installed, so `--prefer-offline` finds it in the cache. */
async function lockedVersion(name: string): Promise<string> {
  const manifest = JSON.parse(
    await readFile(join(ROOT, "node_modules", name, "package.json"), "utf8"),
  );
  return `${name}@${manifest.version}`;
}

/**
 * Copies what a clone holds for the build, without dist, and packs it with npm's lifecycle
 * (prepack builds). A copy, because the build empties dist, which suites running alongside import.
 */
async function packFreshClone(): Promise<{ tarball: string; files: string[] }> {
  const clone = join(work, "clone");
  await mkdir(clone);
  for (const folder of ["src", "scripts"])
    await cp(join(ROOT, folder), join(clone, folder), { recursive: true });
  const files = ["package.json", "tsconfig.json", "tsconfig.build.json"];
  for (const file of [...files, "README.md", "LICENSE", "CHANGELOG.md"])
    await cp(join(ROOT, file), join(clone, file));
  await symlink(join(ROOT, "node_modules"), join(clone, "node_modules"), "dir");
  const { stdout } = await run("npm", ["pack", "--json", "--pack-destination", work], clone);
  const [report] = JSON.parse(stdout.slice(stdout.indexOf("["))) as {
    filename: string;
    files: { path: string }[];
  }[];
  return { tarball: join(work, report!.filename), files: report!.files.map((f) => f.path) };
}

/** Creates an empty project directory holding `files`. */
async function project(name: string, files: Record<string, string>): Promise<string> {
  const dir = join(work, name);
  await mkdir(dir);
  for (const [file, text] of Object.entries(files)) await writeFile(join(dir, file), text);
  return dir;
}

/** Starts `node file` and resolves with the URL it prints once it listens. */
async function start(cwd: string, file: string): Promise<{ url: string; stderr: () => string }> {
  const child = spawn(process.execPath, [file], { cwd, env: childEnv, stdio: "pipe" });
  children.add(child);
  child.once("exit", () => children.delete(child));
  let stdout = "";
  let stderr = "";
  child.stderr.on("data", (chunk) => {
    stderr += chunk;
  });
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout.on("data", (chunk) => {
      stdout += chunk;
      const match = /listening on (\S+)/.exec(stdout);
      if (match) resolve(match[1]!);
    });
    child.once("exit", (code) => reject(new Error(`${file} exited with ${code}:\n${stderr}`)));
  });
  return { url, stderr: () => stderr };
}

/** Sends one modern (2026-07-28) request and returns its result. */
async function modern(url: string, method: string, params: Record<string, unknown>) {
  const name = params.name ?? params.uri;
  const response = await fetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2026-07-28",
      "mcp-method": method,
      ...(typeof name === "string" ? { "mcp-name": name } : {}),
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method,
      params: {
        ...params,
        _meta: {
          "io.modelcontextprotocol/protocolVersion": "2026-07-28",
          "io.modelcontextprotocol/clientCapabilities": {},
          "io.modelcontextprotocol/clientInfo": { name: "pack-test", version: "0.0.0" },
        },
      },
    }),
  });
  expect(response.status, method).toBe(200);
  const message = (await response.json()) as { result?: Record<string, unknown>; error?: unknown };
  expect(message.error, method).toBeUndefined();
  return message.result!;
}

/** Sends a legacy `initialize` and returns the response. */
function legacyInitialize(url: string): Promise<Response> {
  return fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: {
        protocolVersion: "2025-11-25",
        capabilities: {},
        clientInfo: { name: "pack-test", version: "0.0.0" },
      },
    }),
  });
}

const ESM_SERVER = `import express from "express";
import { createMcpHandler, McpServer } from "mcp-mount";
import { toExpress } from "mcp-mount/express";
import type { AddressInfo } from "node:net";

const server = new McpServer({ name: "weather", version: "1.0.0" });
server.tool(
  {
    name: "get_weather",
    description: "Current weather for a city",
    input: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
  },
  async ({ city }, ctx) => {
    await ctx.progress(1, 2);
    return { city, celsius: 22 };
  },
);
server.prompt(
  { name: "greet", arguments: [{ name: "name", required: true }] },
  ({ name }) => \`Hello, \${name}!\`,
);
server.resource({ uri: "file:///readme.txt", name: "readme", mimeType: "text/plain" }, () => "Read me.");

const mcp = createMcpHandler(server, { secret: "${SECRET}" });
const app = express();
app.use("/mcp", toExpress(mcp));
const listener = app.listen(0, "127.0.0.1", () => {
  const { port } = listener.address() as AddressInfo;
  console.log(\`listening on http://127.0.0.1:\${port}/mcp\`);
});
`;

// Compiled to require() calls: on Node >= 20.19 they load the ES modules synchronously.
const CJS_PROGRAM = `import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { createMcpHandler, McpServer } from "mcp-mount";
import { McpClient } from "mcp-mount/client";
import { toNodeHandler } from "mcp-mount/node";

const server = new McpServer({ name: "cjs", version: "1.0.0" });
server.tool(
  { name: "echo", input: { type: "object", properties: { text: { type: "string" } } } },
  ({ text }) => String(text),
);
const mcp = createMcpHandler(server, { secret: "${SECRET}" });
const http = createServer(toNodeHandler(mcp));
http.listen(0, "127.0.0.1", async () => {
  const { port } = http.address() as AddressInfo;
  const client = await McpClient.connect(\`http://127.0.0.1:\${port}/mcp\`);
  const echo = await client.tool("echo");
  console.log(JSON.stringify(await echo?.call({ text: "required" })));
  await client.close();
  await mcp.close();
  http.close();
});
`;

/** A tsconfig for `main`, with the consumer's compiler options. */
function tsconfig(file: string, options: Record<string, unknown>): string {
  return JSON.stringify({
    compilerOptions: { strict: true, target: "es2022", types: ["node"], outDir: "out", ...options },
    files: [file],
  });
}

describe("the packed tarball", () => {
  let packed: { tarball: string; files: string[] };

  beforeAll(async () => {
    work = await mkdtemp(join(tmpdir(), "mcp-mount-pack-"));
    packed = await packFreshClone();
  }, 180_000);

  afterAll(async () => {
    for (const child of children) child.kill("SIGKILL");
    if (work) await rm(work, { recursive: true, force: true });
  });

  it("should build dist on pack and ship it with the license, readme and changelog only", async () => {
    const pkg = JSON.parse(await readFile(join(ROOT, "package.json"), "utf8"));
    const targets = Object.values(pkg.exports as Record<string, Record<string, string>>)
      .flatMap((target) => Object.values(target))
      .concat(pkg.main, pkg.types, Object.values(pkg.bin as Record<string, string>))
      .map((path) => path.replace(/^\.\//, ""));
    expect(packed.files).toEqual(expect.arrayContaining(targets));
    const extra = packed.files.filter((path) => !path.startsWith("dist/"));
    expect(extra.sort()).toEqual(["CHANGELOG.md", "LICENSE", "README.md", "package.json"]);
    expect(packed.files.filter((path) => path.endsWith(".map"))).toEqual([]);
  });

  describe("in an ESM project", () => {
    let dir: string;

    beforeAll(async () => {
      dir = await project("esm", {
        "package.json": JSON.stringify({ name: "esm-consumer", private: true, type: "module" }),
        "server.ts": ESM_SERVER,
        "tsconfig.json": tsconfig("server.ts", {
          module: "nodenext",
          moduleResolution: "nodenext",
          lib: ["es2023"],
        }),
      });
    });

    it(
      "should install with no engine warning from its dependencies",
      async () => {
        const { stdout, stderr } = await run("npm", [...INSTALL, packed.tarball], dir);
        expect(`${stdout}${stderr}`).not.toContain("EBADENGINE");
        const dependencies = await Promise.all(
          ["express", "@types/express", "@types/node"].map(lockedVersion),
        );
        await run("npm", [...INSTALL, ...dependencies], dir);
      },
      SLOW,
    );

    it(
      "should typecheck a README server with nodenext and strict, and serve both eras",
      async () => {
        await run(TSC, ["-p", "."], dir);
        const server = await start(dir, "out/server.js");

        const weather = await modern(server.url, "tools/call", {
          name: "get_weather",
          arguments: { city: "Oslo" },
        });
        expect(weather.structuredContent).toEqual({ city: "Oslo", celsius: 22 });
        const prompt = await modern(server.url, "prompts/get", {
          name: "greet",
          arguments: { name: "Ada" },
        });
        expect(prompt.messages).toEqual([
          { role: "user", content: { type: "text", text: "Hello, Ada!" } },
        ]);
        const resource = await modern(server.url, "resources/read", { uri: "file:///readme.txt" });
        expect(resource.contents).toMatchObject([{ uri: "file:///readme.txt", text: "Read me." }]);

        const initialize = await legacyInitialize(server.url);
        expect(initialize.status).toBe(200);
        expect(initialize.headers.get("mcp-session-id")).toBeTruthy();
        expect(await initialize.json()).toMatchObject({
          result: { protocolVersion: "2025-11-25", serverInfo: { name: "weather" } },
        });
        expect(server.stderr()).toBe("");
      },
      SLOW,
    );
  });

  describe("in a CommonJS project", () => {
    let dir: string;

    beforeAll(async () => {
      dir = await project("cjs", {
        "main.ts": CJS_PROGRAM,
        // TypeScript >= 5.8 lets nodenext CommonJS import an ES module, as Node >= 20.19 does.
        "tsconfig.json": tsconfig("main.ts", { module: "nodenext", lib: ["es2023", "dom"] }),
        // Tools that ignore `exports` find the subpath types through `typesVersions`.
        "tsconfig.node10.json": tsconfig("main.ts", {
          module: "commonjs",
          moduleResolution: "node10",
          lib: ["es2023", "dom"],
          noEmit: true,
        }),
      });
      await run("npm", ["init", "-y"], dir);
      await run("npm", ["pkg", "set", "type=commonjs"], dir);
    });

    it(
      "should install and typecheck require() of the package with nodenext and node10",
      async () => {
        const { stdout, stderr } = await run(
          "npm",
          [...INSTALL, packed.tarball, await lockedVersion("@types/node")],
          dir,
        );
        expect(`${stdout}${stderr}`).not.toContain("EBADENGINE");
        await run(TSC, ["-p", "."], dir);
        await run(TSC, ["-p", "tsconfig.node10.json"], dir);
        expect(await readFile(join(dir, "out/main.js"), "utf8")).toContain('require("mcp-mount")');
      },
      SLOW,
    );

    it.runIf(canRequireEsm)(
      "should run the compiled require() of the package",
      async () => {
        const { stdout, stderr } = await run(process.execPath, ["out/main.js"], dir);
        expect(stderr).toBe("");
        expect(JSON.parse(stdout)).toEqual([{ type: "text", text: "required" }]);
      },
      SLOW,
    );
  });
});
