/**
 * The one error base. Every error tokenbench raises on purpose carries a stable `code` (part of
 * the contract, like the per-request error codes of schema v1: never rename one) and a message
 * that names the cause, what to check and the next step. Entry points catch `TokenbenchError`
 * in one place; anything else is a bug and keeps its stack trace.
 */
export class TokenbenchError extends Error {
  constructor(
    readonly code: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** A mistake in how tokenbench was called (flags, inputs): exit code 2, never a stack trace. */
export class UsageError extends TokenbenchError {
  constructor(
    message: string,
    /** The flag or input at fault, when one is. */
    readonly setting: string | null = null,
  ) {
    super("usage", message);
  }
}

export const isTokenbenchError = (e: unknown): e is TokenbenchError => e instanceof TokenbenchError;
