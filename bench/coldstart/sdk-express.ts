import express from "express";
import { listen } from "./listen.js";
import { sdkListener } from "./sdk.js";

// The official SDK v2 in Express: it has no Express adapter of its own that we install, so its
// Node handler is mounted as Express middleware, as its examples mount it.
const importedMs = performance.now();
const node = sdkListener();
const app = express();
app.post("/mcp", (req, res) => void node(req, res));
listen(app, importedMs);
