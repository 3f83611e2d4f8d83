/**
 * Incremental Server-Sent Events parser (the `text/event-stream` framing only), following the
 * WHATWG HTML standard's "interpreting an event stream" rules.
 *
 * Bytes are fed as they arrive; an event may be split anywhere, down to one byte per read, and one
 * read may carry many events. Lines end in CRLF, LF or a bare CR (a CR at the end of one read and
 * an LF at the start of the next are one line end). One UTF-8 byte-order mark at the very start of
 * the stream is dropped. Comment lines (`:` ping/keep-alive) are dropped; `data` lines are joined
 * with LF; `event:` names are passed along so an `event: error` can be recognised; `id:`, `retry:`
 * and unknown fields are ignored, as the standard says. Lines are cut on raw bytes before any
 * decoding, so a multi-byte UTF-8 character split across reads is never corrupted.
 *
 * One deliberate leniency: at the end of the body an event that lacks its terminating blank line
 * is still delivered (the standard discards it), so a server that ends with `data: [DONE]` and
 * closes is not reported as a stream without its end.
 */
export interface SseEvent {
  data: string;
  event: string | null;
}

const LF = 10;
const CR = 13;
const COLON = 58;

export class SseParser {
  private pending: Buffer | null = null;
  private dataParts: string[] = [];
  private eventName: string | null = null;
  private hasData = false;
  /** The last read ended in CR: an LF that starts the next read belongs to that line end. */
  private skipLf = false;
  /** Nothing read yet: a byte-order mark may still come. */
  private atStart = true;
  /** Bytes seen in total; useful to tell "empty body" from "no events". */
  bytes = 0;
  /** Characters of `data` gathered for the event not yet dispatched. */
  private dataChars = 0;

  /** What is held waiting for the end of a line or of an event: the bound a hostile stream pushes. */
  get bufferedBytes(): number {
    return (this.pending?.length ?? 0) + this.dataChars;
  }

  constructor(private readonly onEvent: (ev: SseEvent) => void) {}

  push(chunk: Buffer): void {
    this.bytes += chunk.length;
    let buf = chunk;
    if (this.pending !== null) {
      buf = Buffer.concat([this.pending, chunk]);
      this.pending = null;
    }
    let start = 0;
    if (this.atStart) {
      // The BOM is three bytes that may themselves arrive split.
      if (buf.length < 3 && isBomPrefix(buf)) {
        this.pending = buf;
        return;
      }
      this.atStart = false;
      if (buf[0] === 0xef && buf[1] === 0xbb && buf[2] === 0xbf) start = 3;
    }
    if (this.skipLf) {
      this.skipLf = false;
      if (start < buf.length && buf[start] === LF) start++;
    }
    const len = buf.length;
    // Servers end lines in LF (or CRLF); one memchr per read finds out whether this read needs
    // the slower byte-wise handling of bare CRs.
    if (buf.indexOf(CR, start) === -1) {
      while (start < len) {
        const nl = buf.indexOf(LF, start);
        if (nl === -1) {
          this.pending = buf.subarray(start);
          return;
        }
        this.line(buf, start, nl);
        start = nl + 1;
      }
      return;
    }
    let i = start;
    while (i < len) {
      const b = buf[i]!;
      if (b === LF || b === CR) {
        this.line(buf, start, i);
        if (b === CR) {
          if (i + 1 === len) {
            this.skipLf = true;
            return;
          }
          if (buf[i + 1] === LF) i++;
        }
        start = i + 1;
      }
      i++;
    }
    if (start < len) this.pending = buf.subarray(start);
  }

  /** End of body: an event without its terminating blank line is still delivered. */
  end(): void {
    if (this.pending !== null && this.pending.length > 0) {
      const buf = this.pending;
      this.pending = null;
      const start = this.atStart && buf[0] === 0xef && buf[1] === 0xbb && buf[2] === 0xbf ? 3 : 0;
      this.line(buf, start, buf.length);
    }
    this.dispatch();
  }

  private line(buf: Buffer, start: number, end: number): void {
    if (end === start) {
      this.dispatch();
      return;
    }
    const first = buf[start];
    if (first === COLON) return; // comment / ping
    let colon = buf.indexOf(COLON, start);
    if (colon === -1 || colon > end) colon = end;
    // The field name is compared as bytes: no string is made for it.
    const kind = fieldKind(buf, start, colon);
    if (kind === NONE) return; // id / retry / unknown fields are ignored, as the standard says
    let vs = colon + 1;
    if (vs < end && buf[vs] === 32) vs++;
    const value = vs < end ? buf.toString("utf8", vs, end) : "";
    if (kind === DATA) {
      this.dataParts.push(value);
      this.dataChars += value.length;
      this.hasData = true;
    } else this.eventName = value;
  }

  private dispatch(): void {
    if (this.hasData) {
      const parts = this.dataParts;
      const data = parts.length === 1 ? parts[0]! : parts.join("\n");
      this.dataParts = [];
      this.dataChars = 0;
      this.hasData = false;
      const event = this.eventName;
      this.eventName = null;
      this.onEvent({ data, event: event === "" ? null : event });
    } else {
      this.eventName = null;
    }
  }
}

const NONE = 0;
const DATA = 1;
const EVENT = 2;

/** Which field a line names (bytes start..colon): `data`, `event`, or one that is ignored. */
function fieldKind(buf: Buffer, start: number, colon: number): number {
  const n = colon - start;
  if (n === 4) {
    return buf[start] === 0x64 &&
      buf[start + 1] === 0x61 &&
      buf[start + 2] === 0x74 &&
      buf[start + 3] === 0x61
      ? DATA
      : NONE;
  }
  if (n === 5)
    return buf[start] === 0x65 &&
      buf[start + 1] === 0x76 &&
      buf[start + 2] === 0x65 &&
      buf[start + 3] === 0x6e &&
      buf[start + 4] === 0x74
      ? EVENT
      : NONE;
  return NONE;
}

function isBomPrefix(buf: Buffer): boolean {
  const bom = [0xef, 0xbb, 0xbf];
  for (let i = 0; i < buf.length; i++) if (buf[i] !== bom[i]) return false;
  return true;
}
