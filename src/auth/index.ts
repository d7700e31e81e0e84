export { type AppAuthOptions, appAuth } from "./app.js";
export {
  type BearerAuthOptions,
  bearerAuth,
  InvalidTokenError,
  type ResourceServerOptions,
} from "./bearer.js";
export { type JwtAuthOptions, jwtAuth } from "./jwt.js";
export type {
  AppAuthRequest,
  AppLogin,
  AppPrincipal,
  McpAuth,
  TokenVerdict,
} from "./types.js";
