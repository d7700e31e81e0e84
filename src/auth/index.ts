export {
  type BearerAuthOptions,
  bearerAuth,
  InvalidTokenError,
  type ResourceServerOptions,
} from "./bearer.js";
export { type JwtAuthOptions, jwtAuth } from "./jwt.js";
export type { McpAuth, TokenVerdict } from "./types.js";
