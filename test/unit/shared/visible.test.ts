import { describe, expect, it } from "vitest";
import { visible } from "../../../src/shared/visible.ts";

describe("visible: invisible format characters written out", () => {
  it("bidirectional overrides, embeddings, isolates and marks", () => {
    for (const cp of [
      0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2066, 0x2067, 0x2068, 0x2069, 0x200e, 0x200f, 0x061c,
    ]) {
      const hex = cp.toString(16).toUpperCase().padStart(4, "0");
      expect(visible(`a${String.fromCodePoint(cp)}b`)).toBe(`a[U+${hex}]b`);
    }
  });

  it("zero-width characters, the byte-order mark, tag characters, line and paragraph separators", () => {
    expect(visible("\u200B\u200C\u200D\u2060\uFEFF")).toBe("[U+200B][U+200C][U+200D][U+2060][U+FEFF]");
    expect(visible("x\u{E0041}")).toBe("x[U+E0041]");
    expect(visible("a\u2028b\u2029c")).toBe("a[U+2028]b[U+2029]c");
    expect(visible("soft\u00ADhyphen")).toBe("soft[U+00AD]hyphen");
  });

  it("leaves visible text alone: right-to-left letters, CJK, combining marks, emoji", () => {
    for (const s of ["Qwen/Qwen2.5-0.5B", "نموذج", "עברית", "模型", "e\u0301", "🚀", "a b\tc"])
      expect(visible(s)).toBe(s);
  });
});
