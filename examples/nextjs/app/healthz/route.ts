import { nodeHandler } from "../../lib/server";

// Readiness for orchestrators: 200 while the endpoint should get traffic, 503 while it drains or
// while its store cannot be reached.
export async function GET(): Promise<Response> {
  const health = await nodeHandler().health();
  return Response.json(health, { status: health.ready ? 200 : 503 });
}
