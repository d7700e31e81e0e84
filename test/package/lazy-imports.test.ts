import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const ROOT = resolve(fileURLToPath(new URL("../..", import.meta.url)));

// A module hook that names every module the child loads, appended to a file at once. Hooks run
// on their own thread: what they write to stderr reaches it through the main thread, which can
// exit first, so on a loaded machine the last names were lost. A synchronous append is done
// before the module it names is even evaluated.
const HOOKS = `import { appendFileSync } from "node:fs";
export async function load(url, context, next) {
  const result = await next(url, context);
  appendFileSync(process.env.LOADED_LOG, url + "\\n");
  return result;
}`;
const REGISTER = `import { register } from "node:module";
register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(HOOKS)}`)});`;

/**
 * Runs `script` (an ES module, importing the sources through tsx) in a fresh Node process and
 * returns the modules it loaded (our sources by path, dependencies by package name) and what it
 * printed.
 */
async function run(script: string): Promise<{ loaded: Set<string>; stdout: string }> {
  const dir = await mkdtemp(join(tmpdir(), "mcp-mount-loaded-"));
  const log = join(dir, "loaded.txt");
  try {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [
        "--import",
        "tsx",
        "--import",
        `data:text/javascript,${encodeURIComponent(REGISTER)}`,
        "--input-type=module",
        "--eval",
        script,
      ],
      { cwd: ROOT, env: { ...process.env, LOADED_LOG: log } },
    );
    const loaded = new Set<string>();
    for (const url of (await readFile(log, "utf8")).split("\n")) {
      if (!url) continue;
      const dependency = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url)?.[1];
      loaded.add(dependency ?? url.replace(`file://${ROOT}/`, ""));
    }
    return { loaded, stdout };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const JWT_AUTH = `
  import { jwtAuth } from "./src/auth/index.ts";
  const auth = jwtAuth({ issuer: "https://issuer.example", secret: "s".repeat(32) });
`;

// Each case starts a Node process that compiles the sources with tsx: slow on a loaded machine.
describe("what importing the package loads", { timeout: 30_000 }, () => {
  it("should not load jose when jwtAuth is only built", async () => {
    const { loaded } = await run(JWT_AUTH);
    expect(loaded.has("src/auth/jwt.ts")).toBe(true);
    expect(loaded.has("jose")).toBe(false);
  });

  it("should load jose once jwtAuth verifies a token, and refuse a malformed one", async () => {
    const { loaded, stdout } = await run(`${JWT_AUTH}
      const verdict = await auth.verify("not.a.jwt", "https://api.example/mcp");
      console.log(JSON.stringify(verdict));
    `);
    expect(JSON.parse(stdout)).toEqual({
      valid: false,
      description: "The access token is malformed",
    });
    expect(loaded.has("jose")).toBe(true);
  });

  it("should not load ajv for the client, which only interprets a server's schemas", async () => {
    const { loaded } = await run(`import "./src/client/index.ts";`);
    expect(loaded.has("src/client/tool.ts")).toBe(true);
    expect(loaded.has("@cfworker/json-schema")).toBe(true);
    expect(loaded.has("ajv")).toBe(false);
  });
});
