import type { McpAuth } from "../../auth/types.js";
import { ErrorCode, McpError } from "../../protocol/errors.js";
import { hasScopes } from "../../server/access.js";
import type { AuthInfo } from "../../server/types.js";
import { authenticate, insufficientScope } from "./auth-gate.js";
import type { EndpointServices } from "../endpoint-services.js";
import type { Caller } from "../caller.js";
import { errorResponse } from "../responses.js";
import type { McpHttpRequest, McpHttpResponse } from "../types.js";

/** The principal auth verified, and the resource URL its token was checked for. */
export interface Verified {
  auth: AuthInfo;
  resource: string;
}

/** Who sent a request, or the response that refuses it (401, 403, or 500 from the app). */
export type Identified = { caller: Caller; verified?: Verified } | { response: McpHttpResponse };

/**
 * Finds who sent a request, once per HTTP request: the app's context (its login may need it),
 * then the principal, which must hold the scopes every request needs.
 */
export async function identifyCaller(
  req: McpHttpRequest,
  auth: McpAuth | undefined,
  reportError: EndpointServices["reportError"],
): Promise<Identified> {
  let app: unknown;
  if (req.context) {
    try {
      app = await req.context();
    } catch (error) {
      reportError(error);
      return {
        response: errorResponse(500, new McpError(ErrorCode.InternalError, "Internal error")),
      };
    }
  }
  let verified: Verified | undefined;
  if (auth) {
    const outcome = await authenticate(auth, req, app, (error) =>
      reportError(error, undefined, app),
    );
    if ("response" in outcome) return outcome;
    verified = outcome;
    if (!hasScopes(verified.auth.scopes, auth.requiredScopes))
      return {
        response: insufficientScope(
          auth,
          verified.resource,
          verified.auth.scopes,
          auth.requiredScopes,
          undefined,
        ),
      };
  }
  const caller: Caller =
    app === undefined ? { auth: verified?.auth } : { auth: verified?.auth, app };
  return { caller, verified };
}
