import type { RequestId } from "../protocol/messages.js";
import { ClientOperation } from "../telemetry/client-operation.js";
import type { Telemetry } from "../telemetry/telemetry.js";
import type { TransportContext } from "./context.js";

/** The transport, its server requests (elicitation, sampling, roots) each a CLIENT span. */
export function tracedTransport(
  telemetry: Telemetry | undefined,
  env: TransportContext,
): TransportContext {
  const ask = env.request;
  if (!telemetry || !ask) return env;
  const destination = {
    transport: env.operation?.transport ?? "tcp",
    protocolVersion: env.protocolVersion,
    sessionId: env.sessionId,
  };
  return {
    ...env,
    request: async (method, params, signal, key) => {
      const operation = new ClientOperation(telemetry, { method, params }, destination);
      const sent = (id: RequestId) => operation.set("jsonrpc.request.id", String(id));
      try {
        const result = await ask(method, operation.inject(params), signal, key, sent);
        operation.end({ result });
        return result;
      } catch (error) {
        operation.endWithError(error);
        throw error;
      }
    },
  };
}
