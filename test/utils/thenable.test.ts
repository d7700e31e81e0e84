import { describe, expect, it } from "vitest";
import { isThenable } from "../../src/utils/thenable.js";

// Thenables built with defineProperty: the point is objects with a then that are not promises.
const withThen = <T extends object>(target: T, then: unknown): T =>
  // biome-ignore lint/suspicious/noThenProperty: a thenable that is not a Promise, on purpose
  Object.defineProperty(target, "then", { value: then });

describe("isThenable", () => {
  it("should take promises and other objects or functions with a then method", () => {
    expect(isThenable(Promise.resolve(1))).toBe(true);
    expect(isThenable(withThen({}, () => {}))).toBe(true);
    expect(
      isThenable(
        withThen(
          () => {},
          () => {},
        ),
      ),
    ).toBe(true);
  });

  it("should leave everything else alone, a then that is no function included", () => {
    for (const value of [null, undefined, 0, "then", {}, [], () => {}, withThen({}, 1)]) {
      expect(isThenable(value)).toBe(false);
    }
  });
});
