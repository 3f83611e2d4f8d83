/**
 * Prefix cache, modelled as vLLM's: prompts are cut into blocks of `blockTokens`; each block is
 * keyed by a hash chained over all blocks before it, so a hit means the whole prefix matched.
 * LRU eviction by tokens held. A hit on the leading k blocks skips their prefill cost and is
 * reported as `cached_tokens = k * blockTokens`.
 */
import { hashChain } from "./tokenizer.ts";

export class PrefixCache {
  private readonly lru = new Map<number, true>();
  hits = 0;
  queries = 0;
  hitTokens = 0;
  queryTokens = 0;

  constructor(
    readonly capacityTokens: number,
    readonly blockTokens = 16,
  ) {}

  private blockHashes(tokens: readonly string[]): number[] {
    const out: number[] = [];
    let h = 0;
    const full = Math.floor(tokens.length / this.blockTokens);
    for (let b = 0; b < full; b++) {
      const s = tokens.slice(b * this.blockTokens, (b + 1) * this.blockTokens).join("\u0001");
      h = hashChain(h, s);
      out.push(h);
    }
    return out;
  }

  /** Empty the cache (a server's reset); returns the tokens it held. */
  clear(): number {
    const held = this.usedTokens;
    this.lru.clear();
    return held;
  }

  /** Look up and insert; returns the number of cached prompt tokens. */
  lookupAndInsert(tokens: readonly string[]): number {
    if (this.capacityTokens <= 0) return 0;
    const hashes = this.blockHashes(tokens);
    let hitBlocks = 0;
    for (const h of hashes) {
      if (!this.lru.has(h)) break;
      hitBlocks++;
    }
    for (const h of hashes) {
      this.lru.delete(h);
      this.lru.set(h, true);
    }
    this.evict();
    const cached = hitBlocks * this.blockTokens;
    this.queries++;
    this.queryTokens += tokens.length;
    if (cached > 0) this.hits++;
    this.hitTokens += cached;
    return cached;
  }

  /**
   * Keep a finished request's full blocks (prompt then generated tokens), as vLLM does: the next
   * turn of a conversation, which re-sends them, hits them. Not a query: the hit counters stay.
   */
  insert(tokens: readonly string[]): void {
    if (this.capacityTokens <= 0) return;
    for (const h of this.blockHashes(tokens)) {
      this.lru.delete(h);
      this.lru.set(h, true);
    }
    this.evict();
  }

  private evict(): void {
    const maxBlocks = Math.floor(this.capacityTokens / this.blockTokens);
    while (this.lru.size > maxBlocks) {
      const oldest = this.lru.keys().next().value as number;
      this.lru.delete(oldest);
    }
  }

  get usedTokens(): number {
    return this.lru.size * this.blockTokens;
  }
}
