/**
 * What one streamed response said, event by event: content-event times and sizes, the first
 * reasoning, answer and tool-call events, usage, the end of the stream and what came after it.
 * The stream client owns the transport and the clock; this owns the meaning of the events.
 */
import type { RequestRecord } from "../../schema/v1.ts";
import type { ApiKind } from "../server/target.ts";
import {
  type ChunkInfo,
  emptyInfo,
  interpretChunk,
  interpretMessagesEvent,
  interpretResponsesEvent,
} from "./chunk.ts";
import { ErrorCode } from "./request-errors.ts";
import type { SseEvent } from "./sse.ts";
import { ThinkTags } from "./think-tags.ts";

/**
 * A usage count above either bound cannot be true: more completion tokens than twice max_tokens,
 * or more than 64 per content event received (speculative decoding sends a handful per event).
 */
export const USAGE_BOUNDS = { perMaxTokens: 2, perContentEvent: 64 };
/** Under this share of max_tokens, an ignore_eos response stopped short whatever it said. */
export const SHORT_OUTPUT_SHARE = 0.9;

export interface ResponseOptions {
  api: ApiKind;
  reasoningTags: "think" | null;
  keepText: boolean;
  /** Maps a server timestamp (system monotonic ms) onto the run's clock. */
  serverOffsetMs: number;
  setError: (code: string, message: string) => void;
}

export class ResponseState {
  readonly eventTimes: number[] = [];
  readonly eventChars: number[] = [];
  serverTimes: number[] | undefined;
  serverArrival: number | undefined;
  eventCount = 0;
  /** `data: [DONE]` came (Responses, Messages: the terminal event). */
  done = false;
  /** Events after the end of the stream: never counted. */
  afterDone = 0;
  finishReason: string | null = null;
  usage: RequestRecord["usage"] = null;
  usageReasoning: number | null = null;
  timings: Record<string, unknown> | null = null;
  usageRaw: Record<string, unknown> | null = null;
  responseId: string | null = null;
  readonly text: string[] | null;
  private firstReasoningMs: number | null = null;
  private firstAnswerMs: number | null = null;
  private firstToolMs: number | null = null;
  private reasoningEvents = 0;
  /** Tool calls without an index (counted as they start), and the indexes indexed calls used. */
  private toolCalls = 0;
  private readonly toolIndexes = new Set<number>();
  private multipleChoices = false;
  private readonly think: ThinkTags | null;
  private readonly interpret: (obj: unknown, into: ChunkInfo) => ChunkInfo;
  private readonly scratch = emptyInfo();

  constructor(private readonly o: ResponseOptions) {
    this.text = o.keepText ? [] : null;
    this.think = o.reasoningTags === "think" ? new ThinkTags() : null;
    this.interpret =
      o.api === "responses"
        ? interpretResponsesEvent
        : o.api === "messages"
          ? interpretMessagesEvent
          : interpretChunk;
  }

  /** One SSE event, received at `tMs` on the run's clock. */
  event(ev: SseEvent, tMs: number): void {
    if (this.done) {
      if (ev.data !== "[DONE]") this.afterDone++;
      return;
    }
    if (ev.data === "[DONE]") {
      this.done = true;
      return;
    }
    this.eventCount++;
    let obj: unknown;
    try {
      obj = JSON.parse(ev.data);
    } catch {
      if (ev.event === "error") this.o.setError(ErrorCode.serverErrorEvent, ev.data.slice(0, 500));
      else
        this.o.setError(
          ErrorCode.malformedChunk,
          `invalid JSON in data event #${this.eventCount}: ${ev.data.slice(0, 200)}`,
        );
      return;
    }
    const info = this.interpret(obj, this.scratch);
    if (info.errorMessage !== null || ev.event === "error")
      this.o.setError(
        info.errorType === "overloaded_error" ? ErrorCode.serverOverloaded : ErrorCode.serverErrorEvent,
        info.errorMessage ?? ev.data.slice(0, 500),
      );
    if (info.maxChoiceIndex > 0 && !this.multipleChoices) {
      this.multipleChoices = true;
      this.o.setError(
        ErrorCode.multipleChoices,
        `the stream carries choice index ${info.maxChoiceIndex}: several choices (n > 1) share one stream, so no per-token figure is one answer's; send n = 1`,
      );
    }
    if (info.usage !== null) {
      if (info.usage.invalid !== null) this.o.setError(ErrorCode.invalidUsage, info.usage.invalid);
      // The Messages API sends its counts over two events: a count an event leaves out keeps the
      // earlier one (the other APIs send every count in one event).
      const was = this.usage;
      this.usage = {
        prompt_tokens: info.usage.prompt ?? was?.prompt_tokens ?? null,
        completion_tokens: info.usage.completion ?? was?.completion_tokens ?? null,
        cached_tokens: info.usage.cached ?? was?.cached_tokens ?? null,
      };
      this.usageReasoning = info.usage.reasoning ?? this.usageReasoning;
    }
    if (info.finishReason !== null) this.finishReason = info.finishReason;
    if (info.timings !== null) this.timings = info.timings;
    if (info.usageRaw !== null) this.usageRaw = info.usageRaw;
    if (info.responseId !== null) this.responseId = info.responseId;
    this.toolCalls += info.toolCalls;
    for (const i of info.toolIndexes) this.toolIndexes.add(i);
    const chars = info.answerChars + info.reasoningChars + info.toolChars;
    if (chars > 0) {
      this.eventTimes.push(tMs);
      this.eventChars.push(chars);
      if (info.reasoningChars > 0) {
        this.reasoningEvents++;
        this.firstReasoningMs ??= tMs;
      }
      if (info.toolChars > 0) this.firstToolMs ??= tMs;
      if (this.think !== null) {
        this.think.feed(info.text, tMs);
        if (info.toolChars > 0) this.firstAnswerMs ??= tMs;
      } else if (info.answerChars > 0 || info.toolChars > 0) this.firstAnswerMs ??= tMs;
      if (this.text !== null && info.text !== "") this.text.push(info.text);
      if (info.serverTsMs !== null) {
        this.serverTimes ??= [];
        this.serverTimes.push(info.serverTsMs - this.o.serverOffsetMs);
      }
      if (info.serverArrivalTsMs !== null)
        this.serverArrival = info.serverArrivalTsMs - this.o.serverOffsetMs;
    }
    if (info.terminal) this.done = true;
  }

  /** The checks only the whole stream allows, then what the record keeps of reasoning and tools. */
  finish(rec: RequestRecord, ignoreEos: boolean): void {
    const t = this.think;
    let firstReasoning = this.firstReasoningMs;
    let firstAnswer = this.firstAnswerMs;
    let reasoningEvents = this.reasoningEvents;
    if (t !== null) {
      t.finish();
      reasoningEvents += t.reasoningEvents;
      firstReasoning = min(firstReasoning, t.firstReasoningMs);
      firstAnswer = min(firstAnswer, t.firstAnswerMs);
    }
    const completion = rec.usage?.completion_tokens ?? null;
    const events = this.eventTimes.length;
    if (rec.error === null && completion !== null) {
      const cap =
        rec.max_tokens !== null ? rec.max_tokens * USAGE_BOUNDS.perMaxTokens : Number.POSITIVE_INFINITY;
      if (completion > cap || completion > events * USAGE_BOUNDS.perContentEvent)
        rec.error = {
          code: ErrorCode.invalidUsage,
          message: `usage.completion_tokens ${completion} cannot be true: max_tokens was ${rec.max_tokens} and ${events} content events came; the stream's own figures are kept, its usage is not counted`,
        };
    }
    // More reasoning tokens than the whole completion cannot be true: the stream's count is used.
    if (completion !== null && this.usageReasoning !== null && this.usageReasoning > completion) {
      rec.reasoning_usage_ignored = this.usageReasoning;
      this.usageReasoning = null;
    }
    if (reasoningEvents > 0) {
      rec.first_reasoning_ms = firstReasoning;
      rec.first_answer_ms = firstAnswer;
      rec.reasoning_events = reasoningEvents;
      if (completion !== null) {
        const fromUsage = this.usageReasoning;
        // One token per event, give or take the end-of-sequence token (counted, never sent):
        // each reasoning event is one token. Otherwise the events' share of the count.
        const perEvent = completion - events <= 1;
        const counted =
          fromUsage ??
          (events > 0
            ? Math.min(
                completion,
                perEvent ? reasoningEvents : Math.round((reasoningEvents * completion) / events),
              )
            : 0);
        rec.reasoning_tokens = counted;
        rec.reasoning_tokens_source = fromUsage !== null ? "usage" : "events";
        rec.answer_tokens = Math.max(0, completion - counted);
      }
    } else if (this.usageReasoning !== null && this.usageReasoning > 0 && completion !== null) {
      // the server thought but streamed none of it (hidden reasoning): tokens without times
      rec.reasoning_tokens = this.usageReasoning;
      rec.reasoning_tokens_source = "usage";
      rec.answer_tokens = Math.max(0, completion - this.usageReasoning);
    }
    if (this.firstToolMs !== null) {
      rec.first_tool_call_ms = this.firstToolMs;
      rec.tool_calls = this.toolCalls + this.toolIndexes.size;
    }
    if (this.afterDone > 0) rec.events_after_done = this.afterDone;
    if (
      ignoreEos &&
      rec.error === null &&
      completion !== null &&
      rec.max_tokens !== null &&
      completion < rec.max_tokens &&
      (rec.finish_reason === "stop" || completion < SHORT_OUTPUT_SHARE * rec.max_tokens)
    )
      rec.short_output = true;
  }
}

const min = (a: number | null, b: number | null): number | null =>
  a === null ? b : b === null ? a : Math.min(a, b);
