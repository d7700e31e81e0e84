import { existsSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const ROOT = resolve(fileURLToPath(new URL("../..", import.meta.url)));
const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"));

/** Every module a built entry reaches through relative imports, with its bare imports. */
function importGraph(entry: string): { files: Set<string>; bare: Set<string> } {
  const files = new Set<string>();
  const bare = new Set<string>();
  const visit = (file: string) => {
    if (files.has(file)) return;
    files.add(file);
    // Doc comments keep their @example code, whose imports are no part of the module.
    const source = readFileSync(file, "utf8").replace(/\/\*[\s\S]*?\*\//g, "");
    for (const match of source.matchAll(
      /(?:import|export)\s[^'"]*?from\s*["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)|import\s*["']([^"']+)["']/g,
    )) {
      const specifier = match[1] ?? match[2] ?? match[3]!;
      if (specifier.startsWith(".")) visit(resolve(dirname(file), specifier));
      else bare.add(specifier);
    }
  };
  visit(entry);
  return { files, bare };
}

describe("the published package", () => {
  it("should be ESM, side-effect free and support Node 20", () => {
    expect(pkg.type).toBe("module");
    expect(pkg.sideEffects).toBe(false);
    expect(pkg.engines.node).toBe(">=20");
  });

  it("should build every subpath export it declares", () => {
    expect(Object.keys(pkg.exports)).toEqual([
      ".",
      "./auth",
      "./express",
      "./next",
      "./node",
      "./redis",
      "./stdio",
      "./client",
      "./client/stdio",
      "./events/receiver",
      "./skills-fs",
      "./client/node",
      "./gateway",
    ]);
    for (const target of Object.values(pkg.exports) as { types: string; default: string }[]) {
      expect(existsSync(join(ROOT, target.default)), target.default).toBe(true);
      expect(existsSync(join(ROOT, target.types)), target.types).toBe(true);
    }
  });

  it("should keep the Web-standard core free of node:, express and ioredis imports", () => {
    for (const subpath of [".", "./next", "./auth", "./client", "./events/receiver"]) {
      const { bare } = importGraph(join(ROOT, pkg.exports[subpath].default));
      const forbidden = [...bare].filter(
        (s) =>
          s.startsWith("node:") ||
          /^(express|ioredis)(\/|$)/.test(s) ||
          ["fs", "http", "crypto", "stream", "net", "path"].includes(s),
      );
      expect(forbidden, subpath).toEqual([]);
      expect([...bare].sort(), subpath).toEqual(
        {
          ".": [
            "@cfworker/json-schema",
            "@opentelemetry/api",
            "ajv",
            "ajv/dist/2020.js",
            // Imported only when `rateLimit` is set, by its own path (test/store/rate-limiter-edge).
            "rate-limiter-flexible/lib/RateLimiterMemory.js",
          ],
          "./next": [],
          "./auth": ["jose"],
          // No ajv: a client only interprets a server's schemas (test/package/lazy-imports).
          "./client": [
            "@cfworker/json-schema",
            "@opentelemetry/api",
            "eventsource-parser/stream",
            // Loaded by import() only when a client signs in (an optional peer dependency).
            "oauth4webapi",
          ],
          // Loaded by import() on the first delivery (an optional peer dependency).
          "./events/receiver": ["standardwebhooks"],
        }[subpath],
      );
    }
  });

  it("should load standardwebhooks, an optional peer dependency, only when a delivery comes", () => {
    const { files } = importGraph(join(ROOT, pkg.exports["./events/receiver"].default));
    const staticImports = [...files].filter((file) =>
      /^\s*import\s[^;]*from\s*["']standardwebhooks["']/m.test(readFileSync(file, "utf8")),
    );
    expect(staticImports).toEqual([]);
    expect(pkg.peerDependenciesMeta.standardwebhooks.optional).toBe(true);
  });

  it("should keep the stdio client, which spawns a process, behind its own subpath", () => {
    const { bare } = importGraph(join(ROOT, pkg.exports["./client/stdio"].default));
    // The OpenTelemetry API (a peer dependency) traces the server's requests it answers.
    expect([...bare].sort()).toEqual(["@opentelemetry/api", "node:child_process"]);
  });

  it("should keep reading skills from disk behind its own subpath", () => {
    const { bare } = importGraph(join(ROOT, pkg.exports["./skills-fs"].default));
    expect([...bare].sort()).toEqual(["node:fs/promises", "node:path"]);
  });

  it("should load oauth4webapi, an optional peer dependency, only when a client signs in", () => {
    const { files } = importGraph(join(ROOT, pkg.exports["./client"].default));
    const staticImports = [...files].filter((file) =>
      /^\s*import\s[^;]*from\s*["']oauth4webapi["']/m.test(readFileSync(file, "utf8")),
    );
    expect(staticImports).toEqual([]);
    expect(pkg.peerDependenciesMeta.oauth4webapi.optional).toBe(true);
  });

  it("should keep the loopback listener, the file store and nodeFetch behind the Node client subpath", () => {
    const { bare } = importGraph(join(ROOT, pkg.exports["./client/node"].default));
    // node:os: the file store's lock names its host, so a pid is only judged on its own host.
    expect([...bare].sort()).toEqual([
      "node:fs/promises",
      "node:http",
      "node:https",
      "node:os",
      "node:path",
      "node:stream",
      "node:zlib",
    ]);
  });

  it("should load the Redis store without loading ioredis, an optional peer dependency", () => {
    const { bare } = importGraph(join(ROOT, pkg.exports["./redis"].default));
    // ioredis is imported as types only: the caller passes the instance.
    expect([...bare].sort()).toEqual([
      "node:crypto",
      "rate-limiter-flexible/lib/RateLimiterRedis.js",
    ]);
    expect(pkg.peerDependencies.ioredis).toBeDefined();
    expect(pkg.peerDependenciesMeta.ioredis.optional).toBe(true);
  });

  it("should load rate-limiter-flexible, an optional peer dependency, only for rateLimit", () => {
    for (const [subpath, limiter] of [
      [".", "RateLimiterMemory"],
      ["./redis", "RateLimiterRedis"],
    ] as const) {
      const { files } = importGraph(join(ROOT, pkg.exports[subpath].default));
      const source = [...files].map((file) => readFileSync(file, "utf8")).join("\n");
      // Inside try, by a literal path: bundlers carry it when installed and build without it.
      expect(source).toMatch(
        new RegExp(
          `try \\{\\s+Limiter = \\(await import\\("rate-limiter-flexible/lib/${limiter}\\.js"`,
        ),
      );
      expect(source).not.toMatch(/^import .*rate-limiter-flexible/m);
    }
    expect(pkg.peerDependencies["rate-limiter-flexible"]).toBeDefined();
    expect(pkg.peerDependenciesMeta["rate-limiter-flexible"].optional).toBe(true);
  });

  it("should load @opentelemetry/api by import() only, once an SDK is registered", () => {
    for (const subpath of [".", "./client", "./client/stdio", "./stdio"]) {
      const { files, bare } = importGraph(join(ROOT, pkg.exports[subpath].default));
      expect(bare.has("@opentelemetry/api"), subpath).toBe(true);
      const staticImports = [...files].filter((file) =>
        /^\s*import\s[^;]*from\s*["']@opentelemetry\/api["']/m.test(readFileSync(file, "utf8")),
      );
      expect(staticImports, subpath).toEqual([]);
    }
  });

  it("should take @opentelemetry/api as a peer dependency, as instrumented libraries do", () => {
    // One copy of the API in an app, so the SDK it registers is the one spans go to.
    expect(pkg.peerDependencies["@opentelemetry/api"]).toBe("^1.9.0");
    expect(pkg.dependencies["@opentelemetry/api"]).toBeUndefined();
    expect(pkg.peerDependenciesMeta["@opentelemetry/api"]).toBeUndefined();
  });

  it("should pin the exported names", async () => {
    const names = async (subpath: string) =>
      Object.keys(await import(join(ROOT, pkg.exports[subpath].default))).sort();
    expect(await names(".")).toEqual([
      "APPS_EXTENSION",
      "APP_MIME_TYPE",
      "EVENTS_EXTENSION",
      "ErrorCode",
      "EventsErrorCode",
      "LEGACY_VERSIONS",
      "MODERN_VERSION",
      "MODERN_VERSIONS",
      "McpError",
      "McpServer",
      "SKILLS_EXTENSION",
      "SUPPORTED_VERSIONS",
      "appToolMeta",
      "createMcpHandler",
      "eventsError",
      "isMcpError",
      "memoryStore",
      "registerAppResource",
      "registerSkill",
    ]);
    expect(await names("./auth")).toEqual([
      "InvalidTokenError",
      "appAuth",
      "bearerAuth",
      "jwtAuth",
    ]);
    expect(await names("./express")).toEqual(["toExpress", "toExpressMetadata"]);
    expect(await names("./next")).toEqual(["toNextRoute"]);
    expect(await names("./node")).toEqual([
      "fromNodeRequest",
      "toNodeHandler",
      "writeNodeResponse",
    ]);
    expect(await names("./redis")).toEqual(["redisStore"]);
    expect(await names("./client")).toEqual([
      "APPS_EXTENSION",
      "APP_MIME_TYPE",
      "ErrorCode",
      "InputRequiredError",
      "McpClient",
      "McpError",
      "McpHttpError",
      "MessageWire",
      "OAuthError",
      "ResultCache",
      "Skill",
      "SkillVerificationError",
      "Tool",
      "ToolApprovalDeniedError",
      "isMcpError",
      "memoryOAuthStore",
      "toAnthropicTool",
      "toAnthropicTools",
      "toOpenAITool",
      "toOpenAITools",
    ]);
    expect(await names("./client/stdio")).toEqual(["StdioWire", "stdio"]);
    expect(await names("./events/receiver")).toEqual([
      "WebhookSecrets",
      "createEventsReceiver",
      "generateWebhookSecret",
    ]);
    expect(await names("./client/node")).toEqual([
      "fileOAuthStore",
      "loopbackRedirect",
      "nodeFetch",
    ]);
    expect(await names("./skills-fs")).toEqual(["registerSkillDirectory"]);
  });
});
