import express, { type Request, type Response } from "express";
import { shareShape } from "../../src/adapters/shared-shape.js";
import { answerCanned, cannedListener } from "./canned.js";
import { serve } from "./serve.js";

// Bare Express with req and res made dictionaries before the canned answer, as toExpress makes
// them (src/adapters/shared-shape.ts): what that alone saves an Express app that does no MCP at
// all, beside bare-express.ts in the same run. BENCH_EXPRESS_JSON=1 puts express.json() in front,
// as there.
const app = express();
const answer =
  process.env.BENCH_EXPRESS_JSON === "1"
    ? (req: Request, res: Response) => answerCanned(res, (req.body as { id: unknown }).id)
    : cannedListener;
if (process.env.BENCH_EXPRESS_JSON === "1") app.use(express.json());
app.use("/mcp", (req, res) => {
  shareShape(req);
  shareShape(res);
  answer(req, res);
});
serve(app);
