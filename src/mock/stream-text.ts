/**
 * The SSE text of one step of a stream: the opening events on the first, the content event (chat,
 * completions or Responses), and on the last the flavour's final events, usage and the end.
 */
import {
  afterDone,
  chunkPrefix,
  contentChunk,
  errorEvent,
  type Piece,
  responsesDelta,
  responsesLast,
  responsesStart,
  roleChunk,
} from "./chunks.ts";
import type { ChunkText, FlavorModule } from "./flavor.ts";
import { messagesDelta, messagesError, messagesLast, messagesStart } from "./messages.ts";
import type { Req } from "./request.ts";

export interface Step {
  piece: Piece;
  first: boolean;
  last: boolean;
  /** The server's send time to stamp into the event, or null. */
  ts: number | null;
  /** The usage JSON (on the last step). */
  usage: string;
  now: number;
}

/** What a stream opens with before its first token (chat: the role chunk; completions: nothing). */
export const openingEvents = (r: Req): string =>
  r.api === "responses" ? responsesStart(r) : r.api === "messages" ? messagesStart(r) : roleChunk(r);

export function streamText(r: Req, flavor: FlavorModule, st: Step): string {
  const o = r.o;
  const { piece, last, ts } = st;
  let out = "";
  if (st.first && !r.roleSent) {
    r.roleSent = true;
    out += openingEvents(r);
  }
  if (
    r.fault === "malformed" &&
    r.emitted > r.target / 2 &&
    r.emitted - piece.to + piece.from <= r.target / 2
  ) {
    out += 'data: {"choices": [{"delta": {"content": "oops"\n\n';
  }
  if (r.fault === "error_event" && last) return out + (r.api === "messages" ? messagesError() : errorEvent());
  const finish = r.target < r.maxTokens ? "stop" : "length";
  if (r.api === "messages") {
    out += last
      ? messagesLast(r, o, piece, ts, r.fault !== "no_usage", r.fault !== "no_done")
      : messagesDelta(r, o, piece, ts);
  } else if (r.api === "responses") {
    out += last ? responsesLast(r, o, piece, st.usage, ts) : responsesDelta(r, o, piece, ts);
  } else {
    const chunks: ChunkText = {
      prefix: chunkPrefix(r),
      content: (p, fin, usage) => contentChunk(r, o, p, fin, usage, ts),
    };
    if (!last) out += chunks.content(piece, null, null);
    else
      out += flavor.lastEvents(
        chunks,
        {
          promptTokens: r.promptTokens.length,
          cachedTokens: r.cachedTokens,
          emitted: r.emitted,
          includeUsage: r.includeUsage && r.fault !== "no_usage",
          usage: st.usage,
          tAdmit: r.tAdmit,
          tFirst: r.tFirst,
          now: st.now,
        },
        piece,
        finish,
      );
    if (last && r.fault !== "no_done") out += "data: [DONE]\n\n";
  }
  if (last && o.protocol.includes("after-done")) out += afterDone(r, o);
  return out;
}
