import { rm } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type ConformanceCheck,
  type ConformanceSuite,
  runSuite,
  type SuiteRun,
  tempResultsDir,
} from "../conformance/harness.js";
import {
  ALPHA_12_AT_2025_11_25,
  ALPHA_12_AT_2026_07_28,
  STABLE_0_1_16,
} from "../conformance/scenarios.js";
import { everythingSettled, GATEWAY } from "../helpers/gateway-everything.js";
import { type GatewayProcess, startGateway } from "../helpers/gateway-process.js";

// The official conformance suite's server scenarios against server-everything behind the
// gateway, in both eras. Most scenarios call fixtures only the conformance suite's own server
// has: tools such as `test_simple_text`, `test_image_content`, `test_error_handling`,
// `test_elicitation`, `test_sampling`, `test_tool_with_progress`, `test_reconnection`,
// `json_schema_2020_12_tool` and the `test_input_required_result_*` family; prompts such as
// `test_simple_prompt`; resources such as `test://static-text`. server-everything has other
// tools under other names (echo, get-sum, trigger-elicitation-request...), so those scenarios
// fail against it whatever serves it: they fail the same way against server-everything's own
// Streamable HTTP transport, with "Unknown tool"/"Unknown prompt"/"Resource not found". Our
// server-everything suites (everything*.test.ts, fleet.test.ts) cover the same features with
// its own tools. At 2026-07-28, server-stateless and http-custom-header-server-validation are
// also "not testable" without the suite's diagnostic tools (`test_missing_capability`,
// `test_logging_tool`, tools with x-mcp-header), and input-required-result-ignore-extra-params
// and -missing-input-response pass no check besides the wire schema.
//
// The scenarios below need nothing server-everything lacks; each must pass through the
// gateway. Every other scenario must still have run, so the split stays honest when a suite
// changes.

/** Sessions, ping, the log level, lists, subscriptions and the HTTP layer's own checks. */
const LEGACY_SUPPORTED = [
  "server-initialize",
  "server-session-lifecycle",
  "logging-set-level",
  "ping",
  "tools-list",
  "server-sse-multiple-streams",
  "resources-list",
  "resources-subscribe",
  "resources-unsubscribe",
  "prompts-list",
  "dns-rebinding-protection",
];

/**
 * The lists and HTTP checks at 2026-07-28, with caching hints, an unknown resource's error and
 * the input_required checks that need no fixture (unsupported methods, input validation).
 */
const MODERN_SUPPORTED = [
  "tools-list",
  "server-sse-multiple-streams",
  "resources-list",
  "sep-2164-resource-not-found",
  "prompts-list",
  "dns-rebinding-protection",
  "caching",
  "http-header-validation",
  "input-required-result-unsupported-methods",
  "input-required-result-validate-input",
];

const ALPHA_12 = "node_modules/@modelcontextprotocol/conformance/dist/index.js";
const STABLE = "node_modules/conformance-stable/dist/index.js";

/** A suite run and the scenarios of it server-everything supports. */
type GatewaySuite = ConformanceSuite & { supported: readonly string[] };

const SUITES: GatewaySuite[] = [
  {
    name: "alpha.12 at 2026-07-28",
    cli: ALPHA_12,
    args: ["--suite", "all", "--spec-version", "2026-07-28"],
    scenarios: ALPHA_12_AT_2026_07_28,
    supported: MODERN_SUPPORTED,
  },
  {
    name: "alpha.12 at 2025-11-25",
    cli: ALPHA_12,
    args: ["--suite", "all", "--spec-version", "2025-11-25"],
    scenarios: ALPHA_12_AT_2025_11_25,
    supported: LEGACY_SUPPORTED,
  },
  {
    name: "0.1.16",
    cli: STABLE,
    args: ["--suite", "all"],
    scenarios: STABLE_0_1_16,
    supported: LEGACY_SUPPORTED.filter((name) => name !== "server-session-lifecycle"),
  },
];

/** Budget for one suite run; a healthy run takes seconds, a scenario may wait 30 s. */
const SUITE_TIMEOUT_MS = 280_000;
const WIRE_CHECK = "wire-schema-valid";

const keep = process.env.CONFORMANCE_OUTPUT_DIR;
let resultsDir: string;
let gateway: GatewayProcess;

beforeAll(async () => {
  resultsDir = keep ?? (await tempResultsDir());
  gateway = await startGateway(GATEWAY);
  await everythingSettled(gateway);
}, 60_000);
afterAll(async () => {
  await gateway?.stop();
  if (!keep && resultsDir) await rm(resultsDir, { recursive: true, force: true });
});

function describeCheck(check: ConformanceCheck): string {
  return `${check.id}: ${check.errorMessage ?? check.description}`;
}

describe.each(SUITES)("conformance $name through the gateway to server-everything", (suite) => {
  let run: SuiteRun;

  beforeAll(async () => {
    const name = `${suite.name} (gateway, server-everything)`;
    run = await runSuite({ ...suite, name }, gateway.url, resultsDir, SUITE_TIMEOUT_MS);
  }, SUITE_TIMEOUT_MS + 20_000);

  it.each(suite.supported)("%s", (scenario) => {
    const checks = run.results.get(scenario);
    if (!checks) expect.fail(`${scenario} did not run. CLI output:\n${run.log.slice(-3_000)}`);
    const failures = checks.filter((check) => check.status === "FAILURE").map(describeCheck);
    expect(failures, `${scenario} has failing checks`).toEqual([]);
    const passed = checks.filter((check) => check.status === "SUCCESS" && check.id !== WIRE_CHECK);
    expect(passed.length, `${scenario} passed no check besides ${WIRE_CHECK}`).toBeGreaterThan(0);
  });

  it("should have run every scenario of the suite, supported or not", () => {
    expect([...run.results.keys()].sort()).toEqual([...suite.scenarios].sort());
  });
});
