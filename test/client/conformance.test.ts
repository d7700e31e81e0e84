import { spawn } from "node:child_process";
import { mkdtemp, readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  type ConformanceCheck,
  node22,
  ROOT,
  tempResultsDir,
  waitForExit,
} from "../conformance/harness.js";

/**
 * The official conformance suite's client scenarios, run against examples/client/conformance.ts
 * (built on McpClient, importing the built package: `npm run build` first). Each run starts the
 * scenario's own mock server and our client with its URL; every check must pass.
 *
 * The auth/* scenarios run below them, each at the wires it applies to.
 *
 * Left out, and why:
 * - sep-2640-* here — the skills scenarios run below against examples/client/skills-conformance.ts,
 *   a host that lists skills and loads one, at the default (modern) wire and at 2025-11-25;
 * - 0.1.16 at an explicit version — its scenarios run at the version they were written for.
 * No scenario of the three sets below fails at the time of writing.
 */
const RUNS: {
  suite: string;
  cli: string;
  version?: string;
  /** Extra CLI arguments (`--force` for an extension scenario off the spec timeline). */
  args?: string[];
  /** The client command, when not the generic one. */
  client?: string;
  scenarios: string[];
}[] = [
  {
    suite: "0.2.0-alpha.12 @ 2026-07-28",
    cli: "node_modules/@modelcontextprotocol/conformance/dist/index.js",
    version: "2026-07-28",
    scenarios: [
      "tools_call",
      "request-metadata",
      "sep-2322-client-request-state",
      "http-standard-headers",
      "http-custom-headers",
      "http-invalid-tool-headers",
      "json-schema-ref-no-deref",
      "json-schema-2020-12-preservation",
    ],
  },
  {
    suite: "0.2.0-alpha.12 @ 2025-11-25",
    cli: "node_modules/@modelcontextprotocol/conformance/dist/index.js",
    version: "2025-11-25",
    scenarios: [
      "initialize",
      "tools_call",
      "elicitation-sep1034-client-defaults",
      "sse-retry",
      "json-schema-2020-12-preservation",
    ],
  },
  {
    // No version given: the client detects the era (modern probe, then initialize).
    suite: "0.1.16",
    cli: "node_modules/conformance-stable/dist/index.js",
    scenarios: ["initialize", "tools_call", "elicitation-sep1034-client-defaults", "sse-retry"],
  },
];

const CLIENT = `${process.execPath} --import tsx examples/client/conformance.ts`;
const SKILLS_CLIENT = `${process.execPath} --import tsx examples/client/skills-conformance.ts`;
const SKILLS_SCENARIOS = [
  "sep-2640-client-no-prefetch",
  "sep-2640-client-verify-digest",
  "sep-2640-client-verify-size",
  "sep-2640-client-verify-frontmatter",
];
RUNS.push(
  {
    suite: "0.2.0-alpha.12 skills (SEP-2640)",
    cli: "node_modules/@modelcontextprotocol/conformance/dist/index.js",
    client: SKILLS_CLIENT,
    scenarios: SKILLS_SCENARIOS,
  },
  {
    suite: "0.2.0-alpha.12 skills (SEP-2640) @ 2025-11-25",
    cli: "node_modules/@modelcontextprotocol/conformance/dist/index.js",
    version: "2025-11-25",
    args: ["--force"],
    client: SKILLS_CLIENT,
    scenarios: SKILLS_SCENARIOS,
  },
);
const SCENARIO_TIMEOUT_MS = 60_000;

/** Runs one client scenario; resolves with its checks (none if the CLI wrote none). */
async function runScenario(
  run: (typeof RUNS)[number],
  scenario: string,
  baseDir: string,
): Promise<ConformanceCheck[]> {
  const outputDir = await mkdtemp(join(baseDir, `${scenario}-`));
  const { command, prefix } = node22();
  const client = run.client ?? CLIENT;
  const args = [
    ...prefix,
    join(ROOT, run.cli),
    "client",
    "--command",
    client,
    "--scenario",
    scenario,
  ];
  if (run.version) args.push("--spec-version", run.version);
  args.push(...(run.args ?? []));
  const child = spawn(command, [...args, "-o", outputDir], {
    cwd: ROOT,
    detached: true,
    stdio: "ignore",
  });
  if (!(await waitForExit(child, SCENARIO_TIMEOUT_MS)) && child.pid !== undefined) {
    process.kill(-child.pid, "SIGKILL");
  }
  for (const entry of await readdir(outputDir)) {
    const file = join(outputDir, entry, "checks.json");
    return JSON.parse(await readFile(file, "utf8")) as ConformanceCheck[];
  }
  return [];
}

/** The auth/* scenarios of both eras' wires since 2025-11-25 (PRM discovery onwards). */
const AUTH_COMMON = [
  "auth/metadata-default",
  "auth/metadata-var1",
  "auth/metadata-var2",
  "auth/metadata-var3",
  "auth/basic-cimd",
  "auth/scope-from-www-authenticate",
  "auth/scope-from-scopes-supported",
  "auth/scope-omitted-when-undefined",
  "auth/scope-step-up",
  "auth/scope-retry-limit",
  "auth/token-endpoint-auth-basic",
  "auth/token-endpoint-auth-post",
  "auth/token-endpoint-auth-none",
  "auth/pre-registration",
];
/**
 * Auth extensions (client credentials, DPoP, workload identity, enterprise-managed
 * authorization): not on the spec timeline, so run with --force.
 */
const AUTH_EXTENSIONS = [
  "auth/client-credentials-jwt",
  "auth/client-credentials-basic",
  "auth/dpop",
  "auth/dpop-nonce",
  "auth/wif-jwt-bearer",
  "auth/enterprise-managed-authorization",
];

/**
 * Every auth/* client scenario of 0.2.0-alpha.12, at each wire it applies to; the extensions
 * run at both (53 runs).
 */
const AUTH_RUNS: { version: string; scenarios: string[] }[] = [
  {
    version: "2026-07-28",
    scenarios: [
      ...AUTH_COMMON,
      "auth/resource-mismatch",
      "auth/offline-access-scope",
      "auth/offline-access-not-supported",
      "auth/authorization-server-migration",
      "auth/iss-supported",
      "auth/iss-not-advertised",
      "auth/iss-supported-missing",
      "auth/iss-wrong-issuer",
      "auth/iss-unexpected",
      "auth/iss-normalized",
      "auth/metadata-issuer-mismatch",
      ...AUTH_EXTENSIONS,
    ],
  },
  { version: "2025-11-25", scenarios: [...AUTH_COMMON, ...AUTH_EXTENSIONS] },
  {
    version: "2025-03-26",
    scenarios: [
      "auth/2025-03-26-oauth-metadata-backcompat",
      "auth/2025-03-26-oauth-endpoint-fallback",
    ],
  },
];

/** What the CLI says of one scenario: its verdict line and its checks. */
interface Verdict {
  scenario: string;
  passed: boolean;
  summary: string;
  checks: ConformanceCheck[];
}

/**
 * Runs one auth scenario and takes the CLI's own verdict ("OVERALL: PASSED": no failed check,
 * no warning, no timeout, and a clean exit unless the scenario expects the client to give up).
 */
async function runAuthScenario(
  scenario: string,
  version: string,
  baseDir: string,
): Promise<Verdict> {
  const outputDir = await mkdtemp(join(baseDir, `${scenario.replace("/", "_")}-${version}-`));
  const { command, prefix } = node22();
  const args = [...prefix, join(ROOT, RUNS[0]!.cli), "client", "--command", CLIENT];
  args.push("--scenario", scenario, "--spec-version", version, "--timeout", "90000");
  if (AUTH_EXTENSIONS.includes(scenario)) args.push("--force");
  const child = spawn(command, [...args, "-o", outputDir], {
    cwd: ROOT,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout?.on("data", (chunk) => (output += chunk));
  child.stderr?.on("data", (chunk) => (output += chunk));
  if (!(await waitForExit(child, 120_000)) && child.pid !== undefined) {
    process.kill(-child.pid, "SIGKILL");
  }
  const checks: ConformanceCheck[] = [];
  for (const file of await readdir(outputDir, { recursive: true })) {
    if (file.endsWith("checks.json")) {
      checks.push(
        ...(JSON.parse(await readFile(join(outputDir, file), "utf8")) as ConformanceCheck[]),
      );
    }
  }
  const summary = /Passed: \d+\/\d+, \d+ failed, \d+ warnings/.exec(output)?.[0] ?? "no summary";
  return { scenario, passed: output.includes("OVERALL: PASSED"), summary, checks };
}

/** Runs `work` over `items`, `limit` at a time (the CLI starts two or three servers per run). */
async function pooled<T, R>(
  items: T[],
  limit: number,
  work: (item: T) => Promise<R>,
): Promise<R[]> {
  const results: R[] = [];
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await work(items[index]!);
    }
  };
  await Promise.all(Array.from({ length: limit }, worker));
  return results;
}

describe("official conformance client auth/* scenarios against McpClient", () => {
  for (const run of AUTH_RUNS) {
    it(`should pass every auth scenario at ${run.version}`, { timeout: 900_000 }, async () => {
      const baseDir = await tempResultsDir();
      const verdicts = await pooled(run.scenarios, 3, (scenario) =>
        runAuthScenario(scenario, run.version, baseDir),
      );
      console.log(verdicts.map((v) => `${run.version} ${v.scenario}: ${v.summary}`).join("\n"));
      const failed = verdicts.filter((v) => !v.passed).map((v) => `${v.scenario}: ${v.summary}`);
      expect(failed, `results under ${baseDir}`).toEqual([]);
      for (const verdict of verdicts) {
        expect(
          verdict.checks.filter((c) => c.status === "SUCCESS").length,
          verdict.scenario,
        ).toBeGreaterThan(0);
      }
    });
  }
});

describe("official conformance client scenarios against McpClient", () => {
  for (const run of RUNS) {
    it(`should pass every check of ${run.suite}`, { timeout: 180_000 }, async () => {
      const baseDir = await tempResultsDir();
      const results = await Promise.all(
        run.scenarios.map(async (scenario) => ({
          scenario,
          checks: await runScenario(run, scenario, baseDir),
        })),
      );
      const failures = results.flatMap(({ scenario, checks }) =>
        checks
          .filter((check) => check.status === "FAILURE")
          .map((check) => `${scenario}: ${check.id}: ${check.errorMessage ?? ""}`),
      );
      expect(failures, `results under ${baseDir}`).toEqual([]);
      for (const { scenario, checks } of results) {
        expect(checks.filter((c) => c.status === "SUCCESS").length, scenario).toBeGreaterThan(0);
      }
    });
  }
});
