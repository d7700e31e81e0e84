import { describe, expect, it } from "vitest";
import { appLinkOf, isModelVisible } from "../../src/protocol/apps.js";

// A tool's `_meta.ui` as a client reads it: the default is visible to both, a malformed
// visibility hides the tool from the model instead of showing it (fail closed).
describe("a tool's app link", () => {
  it("should default to visible to the model", () => {
    expect(isModelVisible(undefined)).toBe(true);
    expect(isModelVisible({ ui: { resourceUri: "ui://a/view.html" } })).toBe(true);
    expect(isModelVisible({ ui: { visibility: ["model", "app"] } })).toBe(true);
  });

  it("should hide an app-only tool from the model", () => {
    expect(isModelVisible({ ui: { visibility: ["app"] } })).toBe(false);
  });

  it("should hide a tool whose visibility is malformed", () => {
    for (const visibility of ["model", "app", {}, 1, null]) {
      expect(isModelVisible({ ui: { visibility } }), JSON.stringify(visibility)).toBe(false);
      expect(appLinkOf({ ui: { visibility } })?.visibility).toEqual([]);
    }
  });
});
