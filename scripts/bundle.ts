// Writes dist/'s JavaScript: one module per entry of package.json (its `exports` and `bin`), and
// the code entries share in chunks beside them, with every dependency left as an import. Node's
// ESM loader resolves, reads and compiles a file at a time, so a cold start importing the
// package's 150 source modules one by one took about twice as long as importing a few bundled
// ones (bench/RESULTS.md, "A bundled dist/"). tsc writes the declarations (tsconfig.build.json).
import { readFileSync } from "node:fs";
import { dirname, join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const DIST = join(ROOT, "dist");

/**
 * The Node-only webhook module, which the events extension imports by a relative path held in a
 * variable (src/server/ext/events/index.ts), so that no bundler of the Web core takes it in. It
 * is an entry of its own here, and the build checks that the code importing it sits in dist/'s
 * root, where that path finds it.
 */
const WEBHOOKS = { out: "webhooks/index", source: "src/server/ext/events/webhooks/index.ts" };
const WEBHOOKS_IMPORT = '"./webhooks/index.js"';

/** `./dist/x/y.js` → `x/y`, the entry's name in esbuild's outdir. */
const entryName = (target: string) => target.replace(/^\.\/dist\//, "").replace(/\.js$/, "");

/** Each entry's output name and its source file. */
function entries(): Record<string, string> {
  const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"));
  const targets: string[] = [
    ...Object.values(pkg.exports as Record<string, { default: string }>).map((t) => t.default),
    ...Object.values(pkg.bin as Record<string, string>),
  ];
  const points: Record<string, string> = {};
  for (const target of targets) points[entryName(target)] = `src/${entryName(target)}.ts`;
  points[WEBHOOKS.out] = WEBHOOKS.source;
  return points;
}

const result = await build({
  absWorkingDir: ROOT,
  entryPoints: entries(),
  outdir: DIST,
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "neutral",
  target: "es2022",
  // Dependencies and node: builtins stay imports, resolved from the app's node_modules.
  packages: "external",
  external: ["node:*"],
  // Chunks in dist/'s root, beside the main entry (see WEBHOOKS).
  chunkNames: "[name]-[hash]",
  metafile: true,
  logLevel: "warning",
});

const misplaced = Object.keys(result.metafile.outputs).filter((file) => {
  const text = readFileSync(join(ROOT, file), "utf8");
  return text.includes(WEBHOOKS_IMPORT) && dirname(relative(DIST, join(ROOT, file))) !== ".";
});
if (misplaced.length > 0) {
  throw new Error(
    `${misplaced.join(", ")} import ${WEBHOOKS_IMPORT} from outside dist${sep}: it would not resolve`,
  );
}
