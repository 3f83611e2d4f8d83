/**
 * A small GGUF (v3) reader and writer: enough to copy the tokenizer of a vocab-only GGUF file
 * and write a tiny random-weight llama model around it, for the real-server test suite.
 * Format: magic "GGUF", version, tensor count, metadata key/values, tensor infos, aligned data.
 */
import { readFileSync, writeFileSync } from "node:fs";

export const T = {
  U8: 0,
  I8: 1,
  U16: 2,
  I16: 3,
  U32: 4,
  I32: 5,
  F32: 6,
  BOOL: 7,
  STR: 8,
  ARR: 9,
  U64: 10,
  I64: 11,
  F64: 12,
} as const;

export type Value =
  | { type: number; value: number | bigint | boolean | string }
  | { type: typeof T.ARR; itemType: number; items: (number | bigint | boolean | string)[] };

export function readMetadata(path: string): Map<string, Value> {
  const b = readFileSync(path);
  let o = 0;
  /** Advance the cursor by n bytes; returns where the value starts. */
  const take = (n: number) => {
    const at = o;
    o += n;
    return at;
  };
  const u32 = () => b.readUInt32LE(take(4));
  const u64 = () => b.readBigUInt64LE(take(8));
  const str = () => {
    const n = Number(u64());
    const at = take(n);
    return b.toString("utf8", at, at + n);
  };
  const scalar = (t: number): number | bigint | boolean | string => {
    switch (t) {
      case T.U8:
        return b.readUInt8(take(1));
      case T.I8:
        return b.readInt8(take(1));
      case T.U16:
        return b.readUInt16LE(take(2));
      case T.I16:
        return b.readInt16LE(take(2));
      case T.U32:
        return u32();
      case T.I32:
        return b.readInt32LE(take(4));
      case T.F32:
        return b.readFloatLE(take(4));
      case T.BOOL:
        return b.readUInt8(take(1)) !== 0;
      case T.STR:
        return str();
      case T.U64:
        return u64();
      case T.I64:
        return b.readBigInt64LE(take(8));
      case T.F64:
        return b.readDoubleLE(take(8));
      default:
        throw new Error(`${path}: unknown GGUF value type ${t}`);
    }
  };
  if (b.toString("latin1", 0, 4) !== "GGUF") throw new Error(`${path} is not a GGUF file`);
  take(4);
  const version = u32();
  if (version < 2) throw new Error(`${path}: GGUF version ${version} is too old`);
  u64(); // tensors
  const kvs = Number(u64());
  const out = new Map<string, Value>();
  for (let i = 0; i < kvs; i++) {
    const key = str();
    const type = u32();
    if (type === T.ARR) {
      const itemType = u32();
      const n = Number(u64());
      const items = new Array(n);
      for (let k = 0; k < n; k++) items[k] = scalar(itemType);
      out.set(key, { type: T.ARR, itemType, items });
    } else out.set(key, { type, value: scalar(type) });
  }
  return out;
}

class Writer {
  private chunks: Buffer[] = [];
  size = 0;
  push(buf: Buffer): void {
    this.chunks.push(buf);
    this.size += buf.length;
  }
  u32(v: number): void {
    const x = Buffer.alloc(4);
    x.writeUInt32LE(v);
    this.push(x);
  }
  u64(v: number | bigint): void {
    const x = Buffer.alloc(8);
    x.writeBigUInt64LE(BigInt(v));
    this.push(x);
  }
  str(s: string): void {
    const x = Buffer.from(s, "utf8");
    this.u64(x.length);
    this.push(x);
  }
  scalar(t: number, v: number | bigint | boolean | string): void {
    const x = Buffer.alloc(8);
    switch (t) {
      case T.U8:
        x.writeUInt8(v as number);
        return this.push(x.subarray(0, 1));
      case T.I8:
        x.writeInt8(v as number);
        return this.push(x.subarray(0, 1));
      case T.U16:
        x.writeUInt16LE(v as number);
        return this.push(x.subarray(0, 2));
      case T.I16:
        x.writeInt16LE(v as number);
        return this.push(x.subarray(0, 2));
      case T.U32:
        return this.u32(v as number);
      case T.I32:
        x.writeInt32LE(v as number);
        return this.push(x.subarray(0, 4));
      case T.F32:
        x.writeFloatLE(v as number);
        return this.push(x.subarray(0, 4));
      case T.BOOL:
        x.writeUInt8(v ? 1 : 0);
        return this.push(x.subarray(0, 1));
      case T.STR:
        return this.str(v as string);
      case T.U64:
        return this.u64(v as bigint);
      case T.I64:
        x.writeBigInt64LE(BigInt(v as bigint));
        return this.push(x);
      case T.F64:
        x.writeDoubleLE(v as number);
        return this.push(x);
      default:
        throw new Error(`unknown GGUF value type ${t}`);
    }
  }
  pad(align: number): void {
    const n = (align - (this.size % align)) % align;
    if (n) this.push(Buffer.alloc(n));
  }
  buffer(): Buffer {
    return Buffer.concat(this.chunks);
  }
}

export interface Tensor {
  name: string;
  /** ggml order: dims[0] is the innermost (contiguous) dimension. */
  dims: number[];
  /** 0 = F32, 1 = F16 */
  type: 0 | 1;
  data: Buffer;
}

const ALIGN = 32;

export function writeGguf(path: string, meta: Map<string, Value>, tensors: Tensor[]): number {
  const w = new Writer();
  w.push(Buffer.from("GGUF", "latin1"));
  w.u32(3);
  w.u64(tensors.length);
  w.u64(meta.size);
  for (const [key, v] of meta) {
    w.str(key);
    w.u32(v.type);
    if ("items" in v) {
      w.u32(v.itemType);
      w.u64(v.items.length);
      for (const it of v.items) w.scalar(v.itemType, it);
    } else w.scalar(v.type, v.value);
  }
  let offset = 0;
  for (const t of tensors) {
    w.str(t.name);
    w.u32(t.dims.length);
    for (const d of t.dims) w.u64(d);
    w.u32(t.type);
    w.u64(offset);
    offset += Math.ceil(t.data.length / ALIGN) * ALIGN;
  }
  w.pad(ALIGN);
  for (const t of tensors) {
    w.push(t.data);
    w.pad(ALIGN);
  }
  const buf = w.buffer();
  writeFileSync(path, buf);
  return buf.length;
}

/** IEEE 754 half precision, round to nearest (values here are small: no inf/nan handling needed). */
export function toF16(x: number): number {
  const f = new Float32Array([x]);
  const i = new Uint32Array(f.buffer)[0]!;
  const sign = (i >>> 16) & 0x8000;
  const exp = ((i >>> 23) & 0xff) - 127 + 15;
  let mant = i & 0x7fffff;
  if (exp <= 0) {
    if (exp < -10) return sign;
    mant = (mant | 0x800000) >> (1 - exp);
    return sign | ((mant + 0x1000) >> 13);
  }
  if (exp >= 31) return sign | 0x7c00;
  const h = sign | (exp << 10) | (mant >> 13);
  return mant & 0x1000 ? h + 1 : h;
}
