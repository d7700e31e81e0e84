import type { ContenderId } from "./contenders.js";
import { pairedRatios, ratio, type Sample } from "./report.js";
import type { RatioSummary } from "./stats.js";

/** One paired comparison of the legacy run: `numerator`'s metric ÷ `denominator`'s, per rep. */
interface Comparison {
  title: string;
  numerator: ContenderId;
  denominator: ContenderId;
}

const THROUGHPUT: Comparison[] = [
  { title: "legacy ÷ bare", numerator: "mcp-mount-legacy", denominator: "bare" },
  { title: "modern ÷ bare", numerator: "mcp-mount", denominator: "bare" },
  { title: "legacy ÷ modern", numerator: "mcp-mount-legacy", denominator: "mcp-mount" },
  { title: "legacy ÷ SDK v1", numerator: "mcp-mount-legacy", denominator: "sdk-v1" },
];

// Rival ÷ legacy, as in the modern report: below 1, our legacy path spends more CPU per request.
const CPU: Comparison[] = [
  { title: "bare ÷ legacy", numerator: "bare", denominator: "mcp-mount-legacy" },
  { title: "modern ÷ legacy", numerator: "mcp-mount", denominator: "mcp-mount-legacy" },
  { title: "SDK v1 ÷ legacy", numerator: "sdk-v1", denominator: "mcp-mount-legacy" },
];

/** The legacy run's paired ratios, by table, concurrency and comparison title. */
export type LegacySummary = Record<
  "throughput" | "cpu",
  { concurrency: number; ratios: Record<string, RatioSummary | undefined> }[]
>;

function table(samples: Sample[], concurrency: number[], comparisons: Comparison[], cpu: boolean) {
  return concurrency.map((c) => ({
    concurrency: c,
    ratios: Object.fromEntries(
      comparisons.map(({ title, numerator, denominator }) => [
        title,
        pairedRatios(samples, c, numerator, denominator, cpu ? "cpuPerRequest" : "rps"),
      ]),
    ),
  }));
}

/** mcp-mount's legacy path against bare node:http, its own modern path and the SDK v1. */
export function summarizeLegacy(samples: Sample[], concurrency: number[]): LegacySummary {
  return {
    throughput: table(samples, concurrency, THROUGHPUT, false),
    cpu: table(samples, concurrency, CPU, true),
  };
}

/** The legacy ratios as two Markdown tables, ready for RESULTS.md. */
export function formatLegacyTables(summary: LegacySummary): string {
  const lines: string[] = [];
  const print = (heading: string, comparisons: Comparison[], rows: LegacySummary["cpu"]) => {
    lines.push(
      "",
      `| concurrency | ${comparisons.map((c, i) => (i === 0 ? `${heading}: ${c.title}` : c.title)).join(" | ")} |`,
      `| ---: |${" ---: |".repeat(comparisons.length)}`,
    );
    for (const row of rows) {
      const cells = comparisons.map(({ title }) => ratio(row.ratios[title]));
      lines.push(`| ${row.concurrency} | ${cells.join(" | ")} |`);
    }
  };
  print("req/s", THROUGHPUT, summary.throughput);
  print("server CPU per request", CPU, summary.cpu);
  return lines.join("\n");
}
