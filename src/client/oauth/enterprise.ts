import { checkAudience, checkIssuer } from "./binding.js";
import { type Discovery, serverMetadata } from "./discovery.js";
import { type IdentityContext, secretAuth } from "./identity.js";
import { toOAuthError } from "./load.js";
import { type EnterpriseOptions, OAuthError } from "./types.js";

const TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange";
const ID_JAG = "urn:ietf:params:oauth:token-type:id-jag";
const ID_TOKEN = "urn:ietf:params:oauth:token-type:id_token";

/** The identity provider as oauth4webapi takes it: its issuer and token endpoint. */
async function identityProvider(context: IdentityContext, enterprise: EnterpriseOptions) {
  const { idpIssuer, idpTokenEndpoint } = enterprise;
  if (idpTokenEndpoint) return { issuer: idpIssuer, token_endpoint: idpTokenEndpoint };
  return serverMetadata(idpIssuer, context.fetch);
}

/**
 * Asks the enterprise identity provider for an ID-JAG for the MCP server's authorization server
 * (RFC 8693 token exchange of the user's ID token; draft-ietf-oauth-identity-assertion-authz-grant
 * §4.3), after checking that server is the one configured; the ID-JAG is refused unless its
 * `aud` names that server, so it goes nowhere else.
 */
export async function idJagFor(
  context: IdentityContext,
  discovery: Discovery,
  scope: string | undefined,
): Promise<string> {
  const { oauth, options } = context;
  const { enterprise } = options;
  const { server, resource } = discovery;
  if (!enterprise) throw new OAuthError('The "enterprise_managed" grant needs `enterprise`');
  checkIssuer(options, server);
  const idp = await identityProvider(context, enterprise);
  const given = enterprise.idToken;
  const idToken = typeof given === "function" ? await given() : given;
  const client = { client_id: enterprise.idpClientId };
  const auth = enterprise.idpClientSecret
    ? secretAuth(oauth, idp, enterprise.idpClientSecret)
    : oauth.None();
  let issued: Record<string, unknown>;
  try {
    const response = await oauth.genericTokenEndpointRequest(
      idp as never,
      client,
      auth,
      TOKEN_EXCHANGE,
      {
        requested_token_type: ID_JAG,
        audience: enterprise.issuer,
        resource,
        ...(scope ? { scope } : {}),
        subject_token: idToken,
        subject_token_type: ID_TOKEN,
      },
      context.http(String(idp.token_endpoint)),
    );
    // RFC 8693 §2.2.1: a token that is no access token has token_type "N_A".
    issued = await oauth.processGenericTokenEndpointResponse(idp as never, client, response, {
      recognizedTokenTypes: { n_a: () => {} },
    });
  } catch (error) {
    throw toOAuthError(error, "Token exchange at the identity provider");
  }
  if (issued.issued_token_type !== ID_JAG || typeof issued.access_token !== "string") {
    throw new OAuthError("The identity provider answered the token exchange with no ID-JAG");
  }
  checkAudience(issued.access_token, server, "identity provider's ID-JAG");
  return issued.access_token;
}
