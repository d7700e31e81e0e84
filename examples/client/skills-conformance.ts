// The host the official conformance suite drives in its sep-2640-client-* scenarios: it runs
// this command with the scenario's server URL appended (and MCP_CONFORMANCE_SCENARIO). It lists
// the server's skills, which fetches no file; then, except in the no-prefetch scenario (a
// session that never needs a skill), it loads the first skill, which fetches SKILL.md and
// verifies it against the listing, and only when that passes reads the skill's other files.
import { McpClient, SkillVerificationError } from "mcp-mount/client";

const url = process.argv[2];
if (!url) throw new Error("usage: skills-conformance.ts <server-url>");
const version = process.env.MCP_CONFORMANCE_PROTOCOL_VERSION;
const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? "";

const client = await McpClient.connect(url, {
  clientInfo: { name: "mcp-mount-skills-conformance-host", version: "0.1.0" },
  era: version === undefined ? "auto" : version >= "2026-07-28" ? "modern" : "legacy",
  eraCache: false,
});
try {
  const skills = await client.skills();
  console.log(`skills: ${skills.map((skill) => skill.uri).join(", ")}`);
  const [skill] = skills;
  if (skill && !scenario.endsWith("no-prefetch")) {
    try {
      const loaded = await skill.load();
      console.log(`loaded ${skill.name}: ${loaded.body.length} characters of instructions`);
      const others = skill.resources === "dynamic" ? [] : skill.resources;
      for (const file of others.filter((entry) => entry.uri !== skill.uri)) {
        console.log(`${file.uri}: ${(await skill.read(file.uri)).byteLength} bytes`);
      }
    } catch (error) {
      if (!(error instanceof SkillVerificationError)) throw error;
      console.error(`refused ${skill.name}: ${error.message}`);
    }
  }
} finally {
  await client.close();
}
