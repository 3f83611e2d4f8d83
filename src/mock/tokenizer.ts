/**
 * The mock's deterministic tokenizer. Rule: a token is a maximal run of ASCII letters/digits, or
 * any single other non-whitespace character; whitespace is free. "Hello, world!" is 4 tokens.
 * `count_tokens`, `/tokenize` and `usage.prompt_tokens` all use this rule, so they always agree.
 */
const TOKEN_RE = /[A-Za-z0-9]+|[^\sA-Za-z0-9]/g;

export function tokenize(text: string): string[] {
  return text.match(TOKEN_RE) ?? [];
}

export function countTokens(text: string): number {
  let n = 0;
  TOKEN_RE.lastIndex = 0;
  while (TOKEN_RE.exec(text) !== null) n++;
  return n;
}

/** FNV-1a over a string, chained with a previous hash: block hashes for the prefix cache. */
export function hashChain(prev: number, s: string): number {
  let h = (prev ^ 0x811c9dc5) >>> 0;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}
