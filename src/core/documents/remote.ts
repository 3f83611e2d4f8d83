/**
 * Answers of remote services (GitHub's API, the results service) as the Action and the CLI read them. A
 * proxy's HTML error page, a captive portal or a truncated body is not the JSON the service
 * speaks: instead of `Unexpected token '<'`, the error names the service and the request, the
 * status, the content type and the first bytes of the body, shortened to one line.
 */
import { TokenbenchError } from "../../schema/errors.ts";

/** The first bytes of a body as one line: whitespace collapsed, at most `max` characters. */
export function firstBytes(text: string, max = 160): string {
  const line = text.replace(/\s+/g, " ").trim();
  if (line === "") return "an empty body";
  return JSON.stringify([...line].length > max ? `${[...line].slice(0, max - 1).join("")}…` : line);
}

/** `GitHub's API (GET /repos/a/b/pulls) answered HTTP 502 (text/html): "<html>…"`. */
export function answerText(service: string, res: Response, text: string): string {
  const type = res.headers.get("content-type")?.split(";")[0]?.trim() || "no content type";
  return `${service} answered HTTP ${res.status} (${type}): ${firstBytes(text)}`;
}

export class RemoteAnswerError extends TokenbenchError {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super("remote_answer_invalid", message);
  }
}

/** The answer's JSON, or a RemoteAnswerError naming the service, status and first bytes. */
export async function readJson<T>(res: Response, service: string): Promise<T> {
  const text = await res.text();
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new RemoteAnswerError(res.status, `${answerText(service, res, text)}, not the JSON it speaks`);
  }
}

/** A failed answer as an error message: the service, the status and the first bytes. */
export async function failureText(res: Response, service: string): Promise<string> {
  return answerText(service, res, await res.text().catch(() => ""));
}

export const secs = (ms: number) => `${Math.round(ms / 100) / 10} s`;

/**
 * The error of a fetch that may have been aborted by its deadline, in words: undici's own message
 * is "fetch failed", the cause (refused, unknown host, reset) is in `cause`.
 */
export function fetchError(err: unknown, timeoutMs: number): string {
  const e = err as Error & { cause?: { code?: string; message?: string } };
  if (e.name === "TimeoutError" || e.name === "AbortError") return `timed out after ${secs(timeoutMs)}`;
  const cause = e.cause
    ? ` (${e.cause.code ?? ""}${e.cause.code && e.cause.message ? ": " : ""}${e.cause.message ?? ""})`
    : "";
  return `network error: ${e.message}${cause}`;
}
