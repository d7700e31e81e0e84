/** The parameters of a `Bearer` challenge (RFC 6750 §3, RFC 9728 §5.1). */
export interface BearerChallenge {
  error?: string;
  scope?: string;
  resourceMetadata?: string;
}

const PARAM = /([A-Za-z0-9_.-]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,]+))/g;

/**
 * The `Bearer` challenge of a response's `WWW-Authenticate` (else its `DPoP` one, RFC 9449
 * §7.1, which carries the same parameters), if it carries one.
 */
export function bearerChallengeOf(response: Response): BearerChallenge | undefined {
  const header = response.headers.get("www-authenticate");
  if (!header) return undefined;
  const at = (scheme: string) => header.search(new RegExp(`(^|[\\s,])${scheme}(\\s|$)`, "i"));
  const start = at("Bearer") >= 0 ? at("Bearer") : at("DPoP");
  if (start < 0) return undefined;
  // Parameters run from the scheme to the next scheme name (a token not followed by "=").
  const rest = header.slice(start).replace(/^[\s,]*(Bearer|DPoP)/i, "");
  const end = rest.search(/,\s*[A-Za-z0-9_.-]+\s+[A-Za-z0-9_.-]+\s*=/);
  const params = end < 0 ? rest : rest.slice(0, end);
  const challenge: BearerChallenge = {};
  for (const match of params.matchAll(PARAM)) {
    const value = match[2] !== undefined ? match[2].replace(/\\(.)/g, "$1") : match[3]!;
    const name = match[1]!.toLowerCase();
    if (name === "error") challenge.error = value;
    else if (name === "scope") challenge.scope = value;
    else if (name === "resource_metadata") challenge.resourceMetadata = value;
  }
  return challenge;
}

/** The union of space-separated scope lists, in first-seen order. */
export function unionScopes(...lists: (string | undefined)[]): string | undefined {
  const scopes = new Set(lists.flatMap((list) => list?.split(" ").filter(Boolean) ?? []));
  return scopes.size > 0 ? [...scopes].join(" ") : undefined;
}
