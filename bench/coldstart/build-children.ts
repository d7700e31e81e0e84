import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { build, type Plugin } from "esbuild";

/** Every cold-start child, in report order; `bundled` ones have everything inlined. */
export const CHILDREN = [
  { id: "bare-node", label: "bare node:http (floor)" },
  { id: "bare-express", label: "bare Express 5 (floor)" },
  { id: "mcp-mount-node", label: "mcp-mount + mcp-mount/node" },
  { id: "sdk-node", label: "official SDK v2 + @modelcontextprotocol/node" },
  { id: "mcp-mount-express", label: "mcp-mount + mcp-mount/express" },
  { id: "sdk-express", label: "official SDK v2 in Express" },
  {
    id: "mcp-mount-node-bundled",
    label: "mcp-mount on node:http, one bundle (as Lambda or Vercel deploys it)",
    bundled: "mcp-mount-node",
  },
  {
    id: "sdk-node-bundled",
    label: "official SDK v2 on node:http, one bundle",
    bundled: "sdk-node",
  },
] as const;

/** One of the children's ids. */
export type ChildId = (typeof CHILDREN)[number]["id"];

const source = (id: string) => fileURLToPath(new URL(`./${id}.ts`, import.meta.url));

/** Resolves `mcp-mount` from `root`, the package under test, wherever the importer is. */
function packageFrom(root: string): Plugin {
  return {
    name: "mcp-mount-from-root",
    setup(build) {
      build.onResolve({ filter: /^mcp-mount(\/|$)/ }, (args) =>
        args.pluginData === root
          ? undefined
          : build.resolve(args.path, { kind: args.kind, resolveDir: root, pluginData: root }),
      );
    },
  };
}

/**
 * Builds each child to JavaScript in `outdir` (under the package root, so that `mcp-mount`
 * resolves to it at run time): dependencies left as imports, as Node loads an app's
 * node_modules, or everything in one file for the bundled ones. Returns each child's file.
 */
export async function buildChildren(root: string, outdir: string): Promise<Map<ChildId, string>> {
  mkdirSync(outdir, { recursive: true });
  const common = {
    outdir,
    outExtension: { ".js": ".mjs" },
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    logLevel: "warning",
  } as const;
  const files = new Map<ChildId, string>();
  const unbundled = CHILDREN.filter((child) => !("bundled" in child));
  await build({
    ...common,
    entryPoints: unbundled.map(({ id }) => source(id)),
    packages: "external",
  });
  for (const { id } of unbundled) files.set(id, join(outdir, `${id}.mjs`));
  for (const child of CHILDREN) {
    if (!("bundled" in child)) continue;
    await build({
      ...common,
      entryPoints: { [child.id]: source(child.bundled) },
      plugins: [packageFrom(root)],
      // A bundle of ESM that requires CommonJS (ajv, express's dependencies) needs a require.
      banner: {
        js: 'import { createRequire } from "node:module"; const require = createRequire(import.meta.url);',
      },
    });
    files.set(child.id, join(outdir, `${child.id}.mjs`));
  }
  return files;
}
