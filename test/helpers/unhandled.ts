import { afterEach, beforeEach, expect } from "vitest";

/**
 * Makes each test of the calling suite fail when an error or a rejection reached the process
 * unhandled while it ran (h3's setup does the same), rather than leaving vitest to report it
 * after the run.
 */
export function failOnUnhandled(): void {
  const seen: unknown[] = [];
  const record = (error: unknown) => seen.push(error);
  beforeEach(() => {
    process.on("uncaughtException", record);
    process.on("unhandledRejection", record);
  });
  afterEach(() => {
    process.off("uncaughtException", record);
    process.off("unhandledRejection", record);
    expect(seen.splice(0).map(String)).toEqual([]);
  });
}
