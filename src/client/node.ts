export { type NodeFetchOptions, nodeFetch } from "./node-fetch.js";
export { type FileOAuthStoreOptions, fileOAuthStore } from "./oauth/file-store.js";
export {
  type LoopbackRedirect,
  type LoopbackRedirectOptions,
  loopbackRedirect,
} from "./oauth/loopback.js";
