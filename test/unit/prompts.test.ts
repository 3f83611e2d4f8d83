import { describe, expect, it } from "vitest";
import { makePrompt, uniqueTag } from "../../src/core/prompts.ts";

describe("unique tags", () => {
  it("fixed width, stable for one (salt, nonce), different across nonces and across runs' salts", () => {
    const tags = Array.from({ length: 1000 }, (_, i) => uniqueTag(i, 7));
    for (const t of tags) expect(t).toMatch(/^req\d{16}$/);
    expect(new Set(tags).size).toBe(1000);
    expect(uniqueTag(5, 7)).toBe(tags[5]);
    expect(uniqueTag(5, 8)).not.toBe(tags[5]);
    // neighbouring ids share no leading digits more often than chance (1 in 10)
    const sameFirst = tags.slice(1).filter((t, i) => t[3] === tags[i]![3]).length;
    expect(sameFirst).toBeLessThan(200);
  });

  it("a prompt leads with its tag, then the seed's words", () => {
    const a = makePrompt(5, 1, 10, 3);
    const b = makePrompt(5, 1, 11, 3);
    expect(a.split(" ")).toHaveLength(5);
    expect(a.split(" ").slice(1)).toEqual(b.split(" ").slice(1));
    expect(a.split(" ")[0]).not.toBe(b.split(" ")[0]);
  });
});
