export * from "./errors.js";
export * from "./messages.js";
export * from "./versions.js";
