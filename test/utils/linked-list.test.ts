import { describe, expect, it } from "vitest";
import { LinkedList } from "../../src/utils/linked-list.js";

describe("LinkedList", () => {
  it("should hold what was added, oldest first, and count it", () => {
    const list = new LinkedList<string>();
    expect(list.size).toBe(0);
    expect(list.values()).toEqual([]);
    list.add("a");
    list.add("b");
    list.add("c");
    expect(list.size).toBe(3);
    expect(list.values()).toEqual(["a", "b", "c"]);
  });

  it("should remove entries in any order, each once", () => {
    const list = new LinkedList<number>();
    const links = [1, 2, 3, 4].map((value) => list.add(value));
    expect(list.remove(links[1]!)).toBe(true);
    expect(list.values()).toEqual([1, 3, 4]);
    expect(list.remove(links[0]!)).toBe(true); // the first
    expect(list.remove(links[3]!)).toBe(true); // the last
    expect(list.values()).toEqual([3]);
    expect(list.remove(links[1]!)).toBe(false);
    expect(list.size).toBe(1);
    list.add(5);
    expect(list.values()).toEqual([3, 5]);
    expect(list.remove(links[2]!)).toBe(true);
    expect(list.values()).toEqual([5]);
    expect(list.size).toBe(1);
  });

  it("should give a copy of its values, safe to change the list while reading it", () => {
    const list = new LinkedList<number>();
    const links = [1, 2, 3].map((value) => list.add(value));
    const seen: number[] = [];
    for (const value of list.values()) {
      seen.push(value);
      list.remove(links[value - 1]!);
    }
    expect(seen).toEqual([1, 2, 3]);
    expect(list.size).toBe(0);
    expect(list.values()).toEqual([]);
  });

  it("should move a link to the end in place, from the start, the middle or the end", () => {
    const list = new LinkedList<number>();
    const links = [1, 2, 3, 4].map((value) => list.add(value));
    list.moveToEnd(links[0]!);
    expect(list.values()).toEqual([2, 3, 4, 1]);
    expect(list.first?.value).toBe(2);
    list.moveToEnd(links[2]!);
    expect(list.values()).toEqual([2, 4, 1, 3]);
    list.moveToEnd(links[2]!); // last already
    expect(list.values()).toEqual([2, 4, 1, 3]);
    list.add(5);
    expect(list.values()).toEqual([2, 4, 1, 3, 5]);
    expect(list.remove(links[2]!)).toBe(true);
    list.moveToEnd(links[2]!); // removed: stays out
    expect(list.values()).toEqual([2, 4, 1, 5]);
    expect(list.size).toBe(4);
    // Walked in place from the first link, oldest first, as a Set iterates.
    const walked: number[] = [];
    for (let link = list.first; link; link = link.next) walked.push(link.value);
    expect(walked).toEqual([2, 4, 1, 5]);
    const one = new LinkedList<number>();
    const only = one.add(9);
    one.moveToEnd(only);
    expect(one.values()).toEqual([9]);
    expect(() => one.moveToEnd(links[0]!)).toThrow(TypeError);
  });

  it("should refuse a link of another list, and leave both lists as they were", () => {
    const one = new LinkedList<number>();
    const other = new LinkedList<number>();
    one.add(1);
    const foreign = one.add(2);
    other.add(3);
    expect(() => other.remove(foreign)).toThrow(TypeError);
    expect(one.values()).toEqual([1, 2]);
    expect(other.values()).toEqual([3]);
  });
});
