import { describe, expect, it } from "vitest";
import { bearerChallengeOf, unionScopes } from "../../src/client/oauth/challenge.js";

const challenge = (header: string) =>
  bearerChallengeOf(new Response(null, { status: 401, headers: { "www-authenticate": header } }));

describe("reading a Bearer challenge (RFC 6750 §3, RFC 9728 §5.1)", () => {
  it("should read error, scope and resource_metadata, quoted or not, in any case", () => {
    expect(
      challenge(
        'Bearer error="insufficient_scope", scope="a b", resource_metadata="https://x.example/.well-known/oauth-protected-resource/mcp", error_description="needs b"',
      ),
    ).toEqual({
      error: "insufficient_scope",
      scope: "a b",
      resourceMetadata: "https://x.example/.well-known/oauth-protected-resource/mcp",
    });
    expect(challenge("bearer ERROR=invalid_token, Scope=read")).toEqual({
      error: "invalid_token",
      scope: "read",
    });
  });

  it("should take the Bearer challenge among others, and unescape quoted values", () => {
    expect(challenge('Basic realm="r", Bearer scope="a\\"b", DPoP algs="ES256"')).toEqual({
      scope: 'a"b',
    });
    expect(challenge('Basic realm="r"')).toBeUndefined();
    expect(bearerChallengeOf(new Response(null, { status: 401 }))).toBeUndefined();
  });

  it("should unite scope lists in first-seen order, or give none", () => {
    expect(unionScopes("a b", "b c", undefined)).toBe("a b c");
    expect(unionScopes(undefined, "")).toBeUndefined();
  });
});
