import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createMcpHandler, McpServer, registerSkill } from "../../src/index.js";
import { type Mounted, mount } from "../helpers/transports.js";

const ROOT = resolve(import.meta.dirname, "../..");
const BIN = join(
  ROOT,
  JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).bin["mcp-mount"],
);
const run = promisify(execFile);

describe("mcp-mount inspect, skills (the built CLI)", () => {
  let mounted: Mounted;
  const reads: string[] = [];
  beforeAll(async () => {
    const server = new McpServer({ name: "skilled", version: "1.0.0" });
    registerSkill(server, {
      name: "release-notes",
      description: "Write release notes in this team's format",
      instructions: "# Release notes\n",
      files: { "templates/notes.md": "## Added\n" },
    });
    const mcp = createMcpHandler(server, {
      secret: "cli-skills",
      onRequest: ({ method, name }) => {
        if (method === "resources/read") reads.push(String(name));
      },
    });
    mounted = await mount("node", mcp);
  });
  afterAll(() => mounted.close());

  it("should list the skills, with their files counted, without reading any", async () => {
    for (const era of ["modern", "legacy"]) {
      const { stdout } = await run(process.execPath, [BIN, "--era", era, "inspect", mounted.url]);
      expect(stdout, era).toContain("Skills (1)");
      expect(stdout, era).toContain(
        "release-notes skill://release-notes/SKILL.md [2 files] — Write release notes in this team's format",
      );
    }
    const { stdout } = await run(process.execPath, [BIN, "--json", "inspect", mounted.url]);
    expect(JSON.parse(stdout).skills).toEqual([
      {
        uri: "skill://release-notes/SKILL.md",
        frontmatter: {
          name: "release-notes",
          description: "Write release notes in this team's format",
        },
        resources: [
          expect.objectContaining({ uri: "skill://release-notes/SKILL.md" }),
          expect.objectContaining({ uri: "skill://release-notes/templates/notes.md" }),
        ],
      },
    ]);
    expect(reads).toEqual([]);
  });
});
