/**
 * Incremental Server-Sent Events parser (the `text/event-stream` framing only).
 *
 * Bytes are fed as they arrive; an event may be split anywhere, down to one byte per read, and one
 * read may carry many events. Lines end in LF or CRLF. Comment lines (`:` ping/keep-alive) are
 * dropped. Only the `data` field matters to OpenAI-compatible streams; `event:` names are passed
 * along so an `event: error` can be recognised. Lines are cut at LF on raw bytes before any
 * decoding, so a multi-byte UTF-8 character split across reads is never corrupted.
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
    const len = buf.length;
    while (start < len) {
      const nl = buf.indexOf(LF, start);
      if (nl === -1) {
        this.pending = buf.subarray(start);
        return;
      }
      let end = nl;
      if (end > start && buf[end - 1] === CR) end--;
      this.line(buf, start, end);
      start = nl + 1;
    }
  }

  /** End of body: an event without its terminating blank line is still delivered. */
  end(): void {
    if (this.pending !== null && this.pending.length > 0) {
      const buf = this.pending;
      this.pending = null;
      let end = buf.length;
      if (buf[end - 1] === CR) end--;
      this.line(buf, 0, end);
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
    const colon = buf.indexOf(COLON, start);
    let field: string;
    let value: string;
    if (colon === -1 || colon >= end) {
      field = buf.toString("latin1", start, end);
      value = "";
    } else {
      field = buf.toString("latin1", start, colon);
      let vs = colon + 1;
      if (vs < end && buf[vs] === 32) vs++;
      value = buf.toString("utf8", vs, end);
    }
    if (field === "data") {
      this.dataParts.push(value);
      this.dataChars += value.length;
      this.hasData = true;
    } else if (field === "event") {
      this.eventName = value;
    }
    // id / retry / unknown fields are ignored, as the spec says.
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
      this.onEvent({ data, event });
    } else {
      this.eventName = null;
    }
  }
}
