import type { McpClient, Tool } from "../client/index.js";
import type { Output } from "./terminal.js";

function flags(tool: Tool): string {
  const marks = [
    tool.readOnly ? "read-only" : tool.destructive ? "destructive" : "writes",
    tool.idempotent ? "idempotent" : "",
    tool.openWorld ? "open-world" : "closed-world",
  ];
  return marks.filter(Boolean).join(", ");
}

function line(name: string, description: unknown): string {
  return typeof description === "string" && description
    ? `  ${name} — ${description}`
    : `  ${name}`;
}

/**
 * What `mcp-mount inspect` prints: the server, its tools with predicates, prompts, resources,
 * and its skills (when it declares the skills extension).
 */
export async function inspect(client: McpClient, json: boolean): Promise<Output> {
  const capabilities = client.server.capabilities;
  const [tools, prompts, resources, templates, skills] = await Promise.all([
    capabilities.tools ? client.tools() : [],
    capabilities.prompts ? client.prompts() : [],
    capabilities.resources ? client.resources() : [],
    capabilities.resources ? client.resourceTemplates() : [],
    // The listing only: no skill file is fetched (SEP-2640).
    client.skills(),
  ]);
  if (json) {
    return {
      json: {
        era: client.era,
        protocolVersion: client.protocolVersion,
        server: client.server,
        tools: tools.map((tool) => ({
          ...tool.definition,
          readOnly: tool.readOnly,
          destructive: tool.destructive,
          idempotent: tool.idempotent,
          openWorld: tool.openWorld,
        })),
        prompts,
        resources,
        resourceTemplates: templates,
        skills: skills.map(({ uri, frontmatter, resources }) => ({ uri, frontmatter, resources })),
      },
    };
  }
  const info = client.server.serverInfo;
  const out = [
    `${info?.name ?? "(unnamed server)"} ${info?.version ?? ""}`.trim(),
    `  ${client.era} era, protocol ${client.protocolVersion}`,
  ];
  if (client.server.instructions) out.push(`  ${client.server.instructions}`);
  out.push("", `Tools (${tools.length})`);
  for (const tool of tools) {
    out.push(line(`${tool.name} [${flags(tool)}]`, tool.description));
  }
  out.push("", `Prompts (${prompts.length})`);
  for (const prompt of prompts) {
    const args = Array.isArray(prompt.arguments)
      ? (prompt.arguments as { name: string; required?: boolean }[])
          .map((a) => (a.required ? a.name : `${a.name}?`))
          .join(", ")
      : "";
    out.push(line(`${prompt.name}(${args})`, prompt.description));
  }
  out.push("", `Resources (${resources.length})`);
  for (const resource of resources) out.push(line(String(resource.uri), resource.name));
  out.push("", `Resource templates (${templates.length})`);
  for (const template of templates) out.push(line(String(template.uriTemplate), template.name));
  if (skills.length > 0) out.push("", `Skills (${skills.length})`);
  for (const skill of skills) {
    const files = skill.resources === "dynamic" ? "dynamic" : `${skill.resources.length} files`;
    out.push(line(`${skill.name} ${skill.uri} [${files}]`, skill.description));
  }
  return { text: out.join("\n") };
}
