import { fileURLToPath } from "node:url";
import type { NextConfig } from "next";

// The example lives inside the mcp-mount package and imports it by name (a package
// self-reference resolved through the root package.json `exports`), so the project root
// Next resolves and traces from is the repository root, two levels up.
const root = fileURLToPath(new URL("../..", import.meta.url));

const nextConfig: NextConfig = {
  turbopack: { root },
  outputFileTracingRoot: root,
};

export default nextConfig;
