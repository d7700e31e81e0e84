import { listen } from "./listen.js";
import { sdkListener } from "./sdk.js";

// The official SDK v2 on node:http.
const importedMs = performance.now();
const node = sdkListener();
listen((req, res) => void node(req, res), importedMs);
