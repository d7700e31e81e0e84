import { readFileSync } from "node:fs";

// Summarises a `--cpu-prof` profile written by `BENCH_CPU_PROF=<id> npm run bench`:
//   npx tsx bench/profile-summary.ts bench/results/profiles/CPU.….cpuprofile [top]

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const [file, topArg] = process.argv.slice(2);
if (!file) throw new TypeError("usage: profile-summary <file.cpuprofile> [top]");
const top = Number(topArg ?? 25);
const profile = JSON.parse(readFileSync(file, "utf8")) as CpuProfile;

const byId = new Map(profile.nodes.map((node) => [node.id, node]));
const parent = new Map<number, number>();
for (const node of profile.nodes)
  for (const child of node.children ?? []) parent.set(child, node.id);

const shortUrl = (url: string) =>
  url.replace(/^file:\/\/.*?\/node_modules\//, "~/").replace(/^file:\/\/\/work\/main\//, "");
const frameName = ({ callFrame }: ProfileNode) =>
  `${callFrame.functionName || "(anonymous)"} ${shortUrl(callFrame.url)}:${callFrame.lineNumber + 1}`;

const self = new Map<string, number>();
const inclusive = new Map<string, number>();
const byFile = new Map<string, number>();
let total = 0;
for (const [i, sample] of profile.samples.entries()) {
  const micros = profile.timeDeltas[i] ?? 0;
  total += micros;
  const leaf = byId.get(sample)!;
  self.set(frameName(leaf), (self.get(frameName(leaf)) ?? 0) + micros);
  const url = shortUrl(leaf.callFrame.url) || `(${leaf.callFrame.functionName})`;
  byFile.set(url, (byFile.get(url) ?? 0) + micros);
  const seen = new Set<string>();
  for (let id: number | undefined = sample; id !== undefined; id = parent.get(id)) {
    const name = frameName(byId.get(id)!);
    if (seen.has(name)) continue;
    seen.add(name);
    inclusive.set(name, (inclusive.get(name) ?? 0) + micros);
  }
}

const print = (title: string, entries: Map<string, number>, filter = (_: string) => true) => {
  console.log(`\n${title}`);
  const rows = [...entries].filter(([name]) => filter(name)).sort((a, b) => b[1] - a[1]);
  for (const [name, micros] of rows.slice(0, top)) {
    console.log(`${((100 * micros) / total).toFixed(1).padStart(5)}%  ${name}`);
  }
};

console.log(`${file}: ${(total / 1e6).toFixed(1)} s sampled`);
print("self time by function", self);
print("self time by file", byFile);
print("inclusive time, this package (dist/)", inclusive, (name) => / dist\//.test(name));
