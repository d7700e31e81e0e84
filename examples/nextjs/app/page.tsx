/** The home page: where the MCP endpoints are. */
export default function Home() {
  return (
    <main>
      <h1>mcp-mount on Next.js</h1>
      <p>
        MCP endpoints: <code>POST /mcp</code> (Node.js runtime) and <code>POST /edge/mcp</code>{" "}
        (edge runtime); <code>POST /auth/mcp</code> needs an OAuth bearer token (metadata at{" "}
        <code>/.well-known/oauth-protected-resource/auth/mcp</code>); <code>POST /proxied/mcp</code>{" "}
        is the endpoint as deployed behind a TLS proxy for mcp.example.com; readiness at{" "}
        <code>GET /healthz</code>.
      </p>
    </main>
  );
}
