import { failOnUnhandled } from "./helpers/unhandled.js";

// Every test fails when an error or a rejection reached the process unhandled while it ran.
failOnUnhandled();
