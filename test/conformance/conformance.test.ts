import { rm } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Cluster, type RedisTopology, startCluster } from "../helpers/cluster.js";
import {
  CONFORMANCE_CLUSTER_SERVER,
  type ConformanceCheck,
  type ConformanceSuite,
  type RunningServer,
  runSuite,
  type SuiteRun,
  startConformanceServer,
  tempResultsDir,
} from "./harness.js";
import {
  ALPHA_12_AT_2025_11_25,
  ALPHA_12_AT_2026_07_28,
  ALPHA_12_SKILLS,
  ALPHA_12_TASKS,
  STABLE_0_1_16,
} from "./scenarios.js";

// The official conformance suite against examples/conformance/server.ts (which serves dist/, so
// `npm test` builds first): every suite against one process, the legacy, tasks and skills ones
// also against three processes sharing a Redis store. Set CONFORMANCE_OUTPUT_DIR to keep every scenario's
// checks.json, and CONFORMANCE_NODE to a Node 22+ binary to skip fetching one with npx.

const ALPHA_12 = "node_modules/@modelcontextprotocol/conformance/dist/index.js";
const STABLE = "node_modules/conformance-stable/dist/index.js";

/** The modern suite run; it must report every scenario it lists. */
const MODERN_SUITE: ConformanceSuite = {
  name: "alpha.12 at 2026-07-28",
  cli: ALPHA_12,
  args: ["--suite", "all", "--spec-version", "2026-07-28"],
  scenarios: ALPHA_12_AT_2026_07_28,
};

/** The suite runs that speak the legacy wire (sessions); each must report every scenario it lists. */
const LEGACY_SUITES: ConformanceSuite[] = [
  {
    name: "alpha.12 at 2025-11-25",
    cli: ALPHA_12,
    args: ["--suite", "all", "--spec-version", "2025-11-25"],
    scenarios: ALPHA_12_AT_2025_11_25,
  },
  { name: "0.1.16", cli: STABLE, args: ["--suite", "all"], scenarios: STABLE_0_1_16 },
];

/** The tasks extension scenarios, one CLI run each (the CLI takes one `--scenario`). */
const TASKS_SUITES: ConformanceSuite[] = ALPHA_12_TASKS.map((scenario) => ({
  name: `alpha.12 ${scenario}`,
  cli: ALPHA_12,
  args: ["--scenario", scenario],
  scenarios: [scenario],
}));

/** The skills extension scenarios, one CLI run each, modern and legacy wire. */
const SKILLS_SUITES: ConformanceSuite[] = ALPHA_12_SKILLS.flatMap((scenario) => [
  {
    name: `alpha.12 ${scenario}`,
    cli: ALPHA_12,
    args: ["--scenario", scenario],
    scenarios: [scenario],
  },
  {
    name: `alpha.12 ${scenario} at 2025-11-25`,
    cli: ALPHA_12,
    args: ["--scenario", scenario, "--spec-version", "2025-11-25", "--force"],
    scenarios: [scenario],
  },
]);

/** Budget for one suite run; the CLI allows 30 s per scenario but a healthy run takes seconds. */
const SUITE_TIMEOUT_MS = 280_000;
/** The check every alpha.12 scenario ends with; it alone does not show the scenario ran. */
const WIRE_CHECK = "wire-schema-valid";

const keep = process.env.CONFORMANCE_OUTPUT_DIR;
let resultsDir: string;

beforeAll(async () => {
  resultsDir = keep ?? (await tempResultsDir());
});

afterAll(async () => {
  if (!keep && resultsDir) await rm(resultsDir, { recursive: true, force: true });
});

function describeCheck(check: ConformanceCheck): string {
  return `${check.id}: ${check.errorMessage ?? check.description}`;
}

function logTail(run: SuiteRun, lines = 40): string {
  return run.log.trimEnd().split("\n").slice(-lines).join("\n");
}

/**
 * One test per scenario of each suite, run against the endpoint `url()` names; `target` tells
 * the runs of one suite against different servers apart, in warnings and result folders.
 */
function describeSuites(suites: ConformanceSuite[], target: string, url: () => string): void {
  describe.each(suites)("conformance $name", (suite) => {
    let run: SuiteRun;

    beforeAll(async () => {
      const name = `${suite.name} (${target})`;
      run = await runSuite({ ...suite, name }, url(), resultsDir, SUITE_TIMEOUT_MS);
    }, SUITE_TIMEOUT_MS + 20_000);

    it.each(suite.scenarios)("%s", (scenario) => {
      const checks = run.results.get(scenario);
      if (!checks) {
        expect.fail(`Scenario ${scenario} did not run. End of the CLI output:\n${logTail(run)}`);
      }
      for (const warning of checks.filter((check) => check.status === "WARNING")) {
        console.warn(
          `[conformance ${suite.name} (${target})] ${scenario} WARNING ${describeCheck(warning)}`,
        );
      }
      const failures = checks.filter((check) => check.status === "FAILURE").map(describeCheck);
      if (failures.length > 0) {
        expect.fail(`${scenario} has failing checks:\n- ${failures.join("\n- ")}`);
      }
      const passed = checks.filter(
        (check) => check.status === "SUCCESS" && check.id !== WIRE_CHECK,
      );
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
}

describe("one process", () => {
  let server: RunningServer | undefined;
  beforeAll(async () => {
    server = await startConformanceServer();
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
  });
  describeSuites(
    [MODERN_SUITE, ...LEGACY_SUITES, ...TASKS_SUITES, ...SKILLS_SUITES],
    "one process",
    () => server!.url,
  );
});

// The legacy and tasks suites again, through three processes on one Redis and on a Redis Cluster,
// behind a round-robin proxy that forwards Host untouched: every request of a session may land
// on another process.
describe.each<RedisTopology>(["standalone", "cluster"])(
  "three processes (Redis store, %s, round-robin proxy)",
  (topology) => {
    let cluster: Cluster | undefined;
    beforeAll(async () => {
      cluster = await startCluster({
        processes: 3,
        server: CONFORMANCE_CLUSTER_SERVER,
        topology,
      });
    }, 120_000);
    afterAll(async () => {
      await cluster?.stop();
    });
    describeSuites(
      [...LEGACY_SUITES, ...TASKS_SUITES, ...SKILLS_SUITES],
      `three processes, ${topology}`,
      () => cluster!.url,
    );

    it("should have served the requests of one session on several processes", () => {
      const backendsOf = new Map<string, Set<number | undefined>>();
      for (const { session, backend } of cluster!.proxyLog) {
        if (session !== undefined)
          backendsOf.set(session, (backendsOf.get(session) ?? new Set()).add(backend));
      }
      const spread = [...backendsOf.values()].filter((backends) => backends.size > 1);
      expect(spread.length).toBeGreaterThan(backendsOf.size / 2);
      expect(new Set(cluster!.proxyLog.map((entry) => entry.backend))).toEqual(new Set([0, 1, 2]));
    });
  },
);
