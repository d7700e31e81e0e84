import express from "express";
import { shareShape } from "../../src/adapters/shared-shape.js";
import { cannedListener } from "./canned.js";
import { serve } from "./serve.js";

// Bare Express with req and res made dictionaries before the canned answer, as toExpress makes
// them (src/adapters/shared-shape.ts): what that alone saves an Express app that does no MCP at
// all, beside bare-express.ts in the same run.
const app = express();
app.use("/mcp", (req, res) => {
  shareShape(req);
  shareShape(res);
  cannedListener(req, res);
});
serve(app);
