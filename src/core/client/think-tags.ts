/**
 * `--reasoning-tags think`: reasoning sent inline in the answer's text as `<think>…</think>`
 * (servers that do not split it into `reasoning_content`). Fed each content event's text in
 * order; the tags may arrive split over several events (llama.cpp sends `<`, `t`, `hi`, `n`, `k`,
 * `>` as six tokens). A stream that shows `</think>` without an opening tag (templates that put
 * `<think>` into the prompt) is reasoning up to that tag. Text without either tag is all answer.
 */
const OPEN = "<think>";
const CLOSE = "</think>";
/** Characters kept from the previous event, so a tag split across events is still found. */
const CARRY = CLOSE.length - 1;

export class ThinkTags {
  /** 0: no text yet or only a prefix of `<think>`; 1: inside the block; 2: after it; 3: no block opened. */
  private phase: 0 | 1 | 2 | 3 = 0;
  private head = "";
  private carry = "";
  /** Events with text, counted up to and including the one that closed the block. */
  private textEvents = 0;
  reasoningEvents = 0;
  firstReasoningMs: number | null = null;
  /** The first answer text: after the block, or the first text when there is none. */
  firstAnswerMs: number | null = null;
  private firstTextMs: number | null = null;

  feed(text: string, tMs: number): void {
    if (text.length === 0) return;
    if (this.phase === 2) {
      if (this.firstAnswerMs === null && text.trim() !== "") this.firstAnswerMs = tMs;
      return;
    }
    this.textEvents++;
    this.firstTextMs ??= tMs;
    let rest = text;
    if (this.phase === 0) {
      this.head += text;
      const h = this.head.trimStart();
      if (h.length === 0 || (h.length < OPEN.length && OPEN.startsWith(h))) return;
      if (h.startsWith(OPEN)) {
        this.phase = 1;
        this.firstReasoningMs = this.firstTextMs;
        rest = h.slice(OPEN.length);
        this.carry = "";
      } else {
        this.phase = 3;
        this.firstAnswerMs = this.firstTextMs;
        rest = this.head;
        this.carry = "";
      }
      this.head = "";
    }
    const hay = this.carry + rest;
    const at = hay.indexOf(CLOSE);
    if (at === -1) {
      this.carry = hay.slice(-CARRY);
      return;
    }
    // Everything so far was reasoning, even in phase 3 (no opening tag came).
    this.phase = 2;
    this.reasoningEvents = this.textEvents;
    this.firstReasoningMs = this.firstTextMs;
    this.firstAnswerMs = hay.slice(at + CLOSE.length).trim() !== "" ? tMs : null;
  }

  /** At the end of the stream: a block opened and never closed is all reasoning. */
  finish(): void {
    if (this.phase === 1) {
      this.reasoningEvents = this.textEvents;
      this.firstAnswerMs = null;
    } else if (this.phase === 0 && this.firstTextMs !== null) {
      // only whitespace or a prefix of the tag: an answer, if anything
      this.firstAnswerMs = this.head.trim() !== "" ? this.firstTextMs : null;
    }
  }
}
