import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { buildChildren, CHILDREN, type ChildId } from "./coldstart/build-children.js";
import { bundleSizes } from "./coldstart/bundle-size.js";
import { entryImports } from "./coldstart/entries.js";
import { type ColdStart, coldStart } from "./coldstart/spawn.js";
import { positive } from "./config.js";
import { fixed, ratio } from "./report.js";
import { median, type RatioSummary, summarizeRatios } from "./stats.js";

// Cold start (issue 36, goal 3): fresh processes, one at a time, each importing a server's code,
// building it, listening and answering one modern tools/call; this package beside the official
// SDK v2 on Express and on node:http, and each host's floor (no MCP at all). The children run
// under plain `node` from JavaScript built here (a TypeScript loader would dwarf what is
// measured) and import the package by name, from its dist/ as a user gets it. The machine is
// shared and noisy, so contenders alternate run by run and ratios are paired within a rep.
// BENCH_PACKAGE=/dir points at another build of the package (a directory with package.json and
// dist/, whose node_modules resolves the dependencies).

/** Pairs compared: ours, theirs, and the floor both stand on. */
const PAIRS = [
  { ours: "mcp-mount-express", theirs: "sdk-express", floor: "bare-express", host: "Express" },
  { ours: "mcp-mount-node", theirs: "sdk-node", floor: "bare-node", host: "node:http" },
  {
    ours: "mcp-mount-node-bundled",
    theirs: "sdk-node-bundled",
    floor: "bare-node",
    host: "node:http, bundled",
  },
] as const;

const reps = Math.round(positive("BENCH_REPS", 15));
const repo = fileURLToPath(new URL("..", import.meta.url));
const root = resolve(process.env.BENCH_PACKAGE || repo);
const resultsDir = fileURLToPath(new URL("./results/", import.meta.url));
const log = (line: string) => process.stderr.write(`${line}\n`);

if (!existsSync(join(root, "dist", "index.js"))) {
  throw new Error(`${root}/dist/index.js is missing: build the package first`);
}

const rotate = <T>(items: readonly T[], by: number) =>
  items.map((_, i) => items[(i + by) % items.length]!);

interface Run {
  rep: number;
  child: ChildId;
  result: ColdStart;
}

const outdir = root === resolve(repo) ? join(resultsDir, "coldstart") : join(root, ".coldstart");
const files = await buildChildren(root, outdir);
for (const { id } of CHILDREN) await coldStart(files.get(id)!);
log(`warmed the file cache; ${reps} reps × ${CHILDREN.length} children from ${root}`);
const loadBefore = loadavg();
const runs: Run[] = [];
for (let rep = 0; rep < reps; rep++) {
  for (const { id } of rotate(CHILDREN, rep)) {
    const result = await coldStart(files.get(id)!);
    runs.push({ rep, child: id, result });
  }
  log(`rep ${rep + 1}/${reps} done`);
}

type Metric = keyof ColdStart;
const of = (child: ChildId, metric: Metric) =>
  median(runs.filter((run) => run.child === child).map((run) => run.result[metric]));

/** Per-rep `f(ours, theirs, floor)` for one pair, summarised. */
function paired(
  pair: (typeof PAIRS)[number],
  metric: Metric,
  f: (ours: number, theirs: number, floor: number) => number,
): RatioSummary {
  const values: number[] = [];
  for (let rep = 0; rep < reps; rep++) {
    const get = (child: ChildId) =>
      runs.find((run) => run.rep === rep && run.child === child)!.result[metric];
    values.push(f(get(pair.ours), get(pair.theirs), get(pair.floor)));
  }
  return summarizeRatios(values);
}

const sizes = await bundleSizes(root);
const entries = await entryImports(root, reps);
const lines = [
  `${cpus().length} × ${cpus()[0]?.model ?? "unknown"}, Node ${process.version}, load ${loadBefore.map((n) => n.toFixed(2)).join(" ")} before, ${loadavg()
    .map((n) => n.toFixed(2))
    .join(" ")} after; medians over ${reps} fresh processes each, ms from process start`,
  "",
  "| server | imports done | listening | first tools/call answered | spawn to answer, seen by the caller | CPU until answered |",
  "| --- | ---: | ---: | ---: | ---: | ---: |",
];
for (const { id, label } of CHILDREN) {
  const cell = (metric: Metric) => fixed(of(id, metric), 0);
  lines.push(
    `| ${label} | ${cell("importedMs")} | ${cell("listeningMs")} | ${cell("answeredMs")} | ${cell("wallMs")} | ${cell("cpuMs")} |`,
  );
}
lines.push(
  "",
  "| host | answered: mcp-mount ÷ SDK v2 (target ≤ 0.5) | above the host's floor: mcp-mount ÷ SDK v2 | imports done ÷ SDK v2 | CPU until answered ÷ SDK v2 | CPU above the floor ÷ SDK v2 |",
  "| --- | ---: | ---: | ---: | ---: | ---: |",
);
for (const pair of PAIRS) {
  const total = paired(pair, "answeredMs", (ours, theirs) => ours / theirs);
  const above = paired(
    pair,
    "answeredMs",
    (ours, theirs, floor) => (ours - floor) / (theirs - floor),
  );
  const imports = paired(pair, "importedMs", (ours, theirs) => ours / theirs);
  const cpu = paired(pair, "cpuMs", (ours, theirs) => ours / theirs);
  const cpuAbove = paired(
    pair,
    "cpuMs",
    (ours, theirs, floor) => (ours - floor) / (theirs - floor),
  );
  lines.push(
    `| ${pair.host} | ${ratio(total)} | ${ratio(above)} | ${ratio(imports)} | ${ratio(cpu)} | ${ratio(cpuAbove)} |`,
  );
}
lines.push(
  "",
  "| entry, imported alone | import() ms | ESM modules | CommonJS files |",
  "| --- | ---: | ---: | ---: |",
);
for (const entry of entries) {
  lines.push(
    `| ${entry.name} | ${fixed(entry.importMs, 0)} | ${entry.modules} | ${entry.commonJs} |`,
  );
}
lines.push("", "| bundle (esbuild, everything inlined, minified) | bytes | gzip | largest parts |");
lines.push("| --- | ---: | ---: | --- |");
for (const size of sizes) {
  const parts = size.largest.map(({ input, bytes }) => `${input} ${(bytes / 1024).toFixed(0)} KiB`);
  lines.push(`| ${size.name} | ${size.bytes} | ${size.gzipBytes} | ${parts.join(", ")} |`);
}
mkdirSync(resultsDir, { recursive: true });
const file = `${resultsDir}coldstart-${new Date().toISOString().replace(/[:.]/g, "-")}.json`;
writeFileSync(file, `${JSON.stringify({ root, reps, runs, entries, sizes }, null, 2)}\n`);
console.log(`${lines.join("\n")}\n\nraw runs: ${file}`);
