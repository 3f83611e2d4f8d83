/**
 * The mock's seeded PRNG: xorshift32 (Marsaglia), a different generator from the harness's
 * mulberry32 on purpose: the mock shares no code with the harness, so a bug in one cannot hide
 * in the other.
 */
export function seededRandom(seed: number): () => number {
  const state = new Uint32Array([seed >>> 0 || 0x9e3779b9]);
  return function next(): number {
    let x = state[0]!;
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    state[0] = x;
    return state[0] / 4294967296;
  };
}
