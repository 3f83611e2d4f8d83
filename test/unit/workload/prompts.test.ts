import { describe, expect, it } from "vitest";
import { makePrompt, uniqueTag } from "../../../src/core/workload/prompts.ts";

describe("unique tags", () => {
  it("fixed width, stable for one (salt, nonce), different across nonces and across runs' salts", () => {
    const tags = Array.from({ length: 1000 }, (_, i) => uniqueTag(i, 7));
    for (const t of tags) expect(t.split(" ")).toHaveLength(8);
    expect(new Set(tags).size).toBe(1000);
    expect(uniqueTag(5, 7)).toBe(tags[5]);
    expect(uniqueTag(5, 8)).not.toBe(tags[5]);
    // neighbouring ids share a first word about as often as chance (1 in 32)
    const first = (t: string) => t.split(" ")[0];
    const sameFirst = tags.slice(1).filter((t, i) => first(t) === first(tags[i]!)).length;
    expect(sameFirst).toBeLessThan(70);
    expect(new Set(tags.map(first)).size).toBe(32);
  });

  it("a prompt leads with its tag, then the seed's words", () => {
    const a = makePrompt(12, 1, 10, 3);
    const b = makePrompt(12, 1, 11, 3);
    expect(a.split(" ")).toHaveLength(12);
    expect(a.split(" ").slice(8)).toEqual(b.split(" ").slice(8));
    expect(a.split(" ").slice(0, 8)).not.toEqual(b.split(" ").slice(0, 8));
  });
});
