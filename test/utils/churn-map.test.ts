import { describe, expect, it } from "vitest";
import { ChurnMap } from "../../src/utils/churn-map.js";

/** A small deterministic generator, so a failing sequence repeats. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2_147_483_648;
    return state / 2_147_483_648;
  };
}

const sorted = <T>(values: T[]) => [...values].sort();

describe("ChurnMap", () => {
  it("should answer as a Map does through any sequence of sets and deletes", () => {
    const next = random(7);
    const churn = new ChurnMap<string, number>(4);
    const model = new Map<string, number>();
    for (let step = 0; step < 5_000; step++) {
      const key = `k${Math.floor(next() * 12)}`;
      if (next() < 0.5) {
        churn.set(key, step);
        model.set(key, step);
      } else {
        expect(churn.delete(key)).toBe(model.delete(key));
      }
      expect(churn.size).toBe(model.size);
      expect(churn.has(key)).toBe(model.has(key));
      expect(churn.get(key)).toBe(model.get(key));
      expect(sorted(churn.keys())).toEqual(sorted([...model.keys()]));
      expect(sorted(churn.values())).toEqual(sorted([...model.values()]));
    }
  });

  it("should keep a key and its value apart from a deleted one's mark", () => {
    const churn = new ChurnMap<string, number | null>();
    churn.set("a", null);
    expect(churn.has("a")).toBe(true);
    expect(churn.get("a")).toBeNull();
    expect(churn.delete("a")).toBe(true);
    expect(churn.has("a")).toBe(false);
    expect(churn.get("a")).toBeUndefined();
    expect(churn.delete("a")).toBe(false);
    expect(churn.delete("never")).toBe(false);
    expect(churn.size).toBe(0);
  });

  it("should reuse a deleted key's entry, and keep no more marks than the floor or the live entries", () => {
    const churn = new ChurnMap<string, number>(8);
    for (let round = 0; round < 100; round++) {
      churn.set("warm", round);
      churn.delete("warm");
    }
    expect(churn.marked).toBe(1);
    for (let i = 0; i < 20; i++) churn.set(`live${i}`, i);
    for (let i = 0; i < 1_000; i++) {
      churn.set(`gone${i}`, i);
      churn.delete(`gone${i}`);
      expect(churn.marked).toBeLessThanOrEqual(20);
    }
    expect(churn.size).toBe(20);
    expect(sorted(churn.values())).toEqual(sorted(Array.from({ length: 20 }, (_, i) => i)));
  });

  it("should give arrays that stay whole while the map changes under them", () => {
    const churn = new ChurnMap<number, number>(1);
    for (let i = 0; i < 10; i++) churn.set(i, i);
    const seen: number[] = [];
    for (const key of churn.keys()) {
      seen.push(key);
      churn.delete(key);
    }
    expect(seen).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(churn.size).toBe(0);
  });
});
