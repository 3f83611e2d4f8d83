/**
 * Text from outside (a model name the server reports, a testbed, branch or label from a document)
 * as a page, badge or comment shows it: every invisible format character (Unicode category Cf:
 * the bidirectional embeddings, overrides and isolates U+202A–U+202E and U+2066–U+2069, the marks
 * U+200E, U+200F and U+061C, zero-width spaces and joiners, U+FEFF, tag characters) and the line
 * and paragraph separators U+2028/U+2029 are written out as `[U+XXXX]`. A U+202E can then no
 * longer reverse the text after it, and nothing hides inside a name that looks like another.
 */
const INVISIBLE = /[\p{Cf}\u2028\u2029]/gu;

export function visible(s: string): string {
  return s.replace(
    INVISIBLE,
    (ch) => `[U+${ch.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")}]`,
  );
}
