import { rm } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type ConformanceCheck,
  type ConformanceSuite,
  type RunningServer,
  runSuite,
  type SuiteRun,
  startConformanceServer,
  tempResultsDir,
} from "./harness.js";
import { ALPHA_12_AT_2025_11_25, ALPHA_12_AT_2026_07_28, STABLE_0_1_16 } from "./scenarios.js";

// The official conformance suite against examples/conformance/server.ts (which serves dist/, so
// `npm test` builds first). Set CONFORMANCE_OUTPUT_DIR to keep every scenario's checks.json, and
// CONFORMANCE_NODE to a Node 22+ binary to skip fetching one with npx.

const ALPHA_12 = "node_modules/@modelcontextprotocol/conformance/dist/index.js";
const STABLE = "node_modules/conformance-stable/dist/index.js";

/** One line per suite run; each must report every scenario it lists. */
const SUITES: ConformanceSuite[] = [
  {
    name: "alpha.12 at 2026-07-28",
    cli: ALPHA_12,
    args: ["--suite", "all", "--spec-version", "2026-07-28"],
    scenarios: ALPHA_12_AT_2026_07_28,
  },
  {
    name: "alpha.12 at 2025-11-25",
    cli: ALPHA_12,
    args: ["--suite", "all", "--spec-version", "2025-11-25"],
    scenarios: ALPHA_12_AT_2025_11_25,
  },
  { name: "0.1.16", cli: STABLE, args: ["--suite", "all"], scenarios: STABLE_0_1_16 },
];

/** Budget for one suite run; the CLI allows 30 s per scenario but a healthy run takes seconds. */
const SUITE_TIMEOUT_MS = 280_000;
/** The check every alpha.12 scenario ends with; it alone does not show the scenario ran. */
const WIRE_CHECK = "wire-schema-valid";

const keep = process.env.CONFORMANCE_OUTPUT_DIR;
let resultsDir: string;
let server: RunningServer | undefined;

beforeAll(async () => {
  resultsDir = keep ?? (await tempResultsDir());
  server = await startConformanceServer();
}, 60_000);

afterAll(async () => {
  await server?.stop();
  if (!keep && resultsDir) await rm(resultsDir, { recursive: true, force: true });
});

function describeCheck(check: ConformanceCheck): string {
  return `${check.id}: ${check.errorMessage ?? check.description}`;
}

function logTail(run: SuiteRun, lines = 40): string {
  return run.log.trimEnd().split("\n").slice(-lines).join("\n");
}

describe.each(SUITES)("conformance $name", (suite) => {
  let run: SuiteRun;

  beforeAll(async () => {
    run = await runSuite(suite, server!.url, resultsDir, SUITE_TIMEOUT_MS);
  }, SUITE_TIMEOUT_MS + 20_000);

  it.each(suite.scenarios)("%s", (scenario) => {
    const checks = run.results.get(scenario);
    if (!checks) {
      expect.fail(`Scenario ${scenario} did not run. End of the CLI output:\n${logTail(run)}`);
    }
    for (const warning of checks.filter((check) => check.status === "WARNING")) {
      console.warn(`[conformance ${suite.name}] ${scenario} WARNING ${describeCheck(warning)}`);
    }
    const failures = checks.filter((check) => check.status === "FAILURE").map(describeCheck);
    if (failures.length > 0) {
      expect.fail(`${scenario} has failing checks:\n- ${failures.join("\n- ")}`);
    }
    const passed = checks.filter((check) => check.status === "SUCCESS" && check.id !== WIRE_CHECK);
    expect(
      passed.length,
      `${scenario} passed no check besides ${WIRE_CHECK}: ${checks.map((c) => `${c.id}=${c.status}`).join(", ")}`,
    ).toBeGreaterThan(0);
  });

  it("should run no scenario beyond the listed ones", () => {
    const unlisted = [...run.results.keys()].filter((name) => !suite.scenarios.includes(name));
    expect(unlisted).toEqual([]);
  });
});
