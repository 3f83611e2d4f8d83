/**
 * A tiny random-weight llama model around a real vocabulary: llama architecture, a few layers,
 * width 256, the tokenizer of a vocab-only GGUF file shipped in llama.cpp's sources, and a
 * ChatML chat template. Random weights never favour EOS, and with ignore_eos the server emits
 * exactly max_tokens tokens, so lengths are exact. Deterministic per seed.
 */
import { readMetadata, T, type Tensor, toF16, type Value, writeGguf } from "./gguf.ts";

export const CHATML =
  "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";

export interface TinyModel {
  layers: number;
  embd: number;
  ff: number;
  heads: number;
  context: number;
  seed: number;
}

export const TINY: TinyModel = { layers: 2, embd: 256, ff: 512, heads: 4, context: 4096, seed: 1 };

function gaussian(seed: number): () => number {
  let a = seed >>> 0;
  const u = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (((t ^ (t >>> 14)) >>> 0) + 0.5) / 4294967296;
  };
  return () => Math.sqrt(-2 * Math.log(u())) * Math.cos(2 * Math.PI * u());
}

export function writeTinyModel(vocabPath: string, outPath: string, m: TinyModel = TINY): number {
  const vocab = readMetadata(vocabPath);
  const tokens = vocab.get("tokenizer.ggml.tokens");
  if (!tokens || !("items" in tokens)) throw new Error(`${vocabPath} has no tokenizer.ggml.tokens`);
  const nVocab = tokens.items.length;
  const meta = new Map<string, Value>();
  const u32 = (v: number): Value => ({ type: T.U32, value: v });
  meta.set("general.architecture", { type: T.STR, value: "llama" });
  meta.set("general.name", { type: T.STR, value: "tokenbench-tiny-random" });
  meta.set("general.alignment", u32(32));
  meta.set("llama.context_length", u32(m.context));
  meta.set("llama.embedding_length", u32(m.embd));
  meta.set("llama.block_count", u32(m.layers));
  meta.set("llama.feed_forward_length", u32(m.ff));
  meta.set("llama.attention.head_count", u32(m.heads));
  meta.set("llama.attention.head_count_kv", u32(m.heads));
  meta.set("llama.attention.layer_norm_rms_epsilon", { type: T.F32, value: 1e-5 });
  meta.set("llama.rope.dimension_count", u32(m.embd / m.heads));
  meta.set("llama.vocab_size", u32(nVocab));
  meta.set("general.file_type", u32(1));
  for (const [k, v] of vocab) if (k.startsWith("tokenizer.")) meta.set(k, v);
  // Byte-fallback tokens (type 6) become plain text tokens ("<0xE3>"): random weights would
  // otherwise emit partial UTF-8 sequences, which the server's chat parser rejects. The prompts
  // tokenbench sends are ASCII words, so no byte fallback is needed on input.
  const types = meta.get("tokenizer.ggml.token_type");
  if (types && "items" in types)
    meta.set("tokenizer.ggml.token_type", { ...types, items: types.items.map((t) => (t === 6 ? 1 : t)) });
  meta.set("tokenizer.chat_template", { type: T.STR, value: CHATML });

  const rand = gaussian(m.seed);
  const f32 = (n: number, fill: (i: number) => number) => {
    const b = Buffer.alloc(n * 4);
    for (let i = 0; i < n; i++) b.writeFloatLE(fill(i), i * 4);
    return b;
  };
  const f16 = (n: number, scale: number) => {
    const b = Buffer.alloc(n * 2);
    for (let i = 0; i < n; i++) b.writeUInt16LE(toF16(rand() * scale), i * 2);
    return b;
  };
  const weight = (name: string, cols: number, rows: number): Tensor => ({
    name,
    dims: [cols, rows],
    type: 1,
    data: f16(cols * rows, 0.05),
  });
  const norm = (name: string): Tensor => ({ name, dims: [m.embd], type: 0, data: f32(m.embd, () => 1) });
  const tensors: Tensor[] = [weight("token_embd.weight", m.embd, nVocab), norm("output_norm.weight")];
  for (let l = 0; l < m.layers; l++) {
    const p = `blk.${l}.`;
    tensors.push(
      norm(`${p}attn_norm.weight`),
      weight(`${p}attn_q.weight`, m.embd, m.embd),
      weight(`${p}attn_k.weight`, m.embd, m.embd),
      weight(`${p}attn_v.weight`, m.embd, m.embd),
      weight(`${p}attn_output.weight`, m.embd, m.embd),
      norm(`${p}ffn_norm.weight`),
      weight(`${p}ffn_gate.weight`, m.embd, m.ff),
      weight(`${p}ffn_up.weight`, m.embd, m.ff),
      weight(`${p}ffn_down.weight`, m.ff, m.embd),
    );
  }
  return writeGguf(outPath, meta, tensors);
}
