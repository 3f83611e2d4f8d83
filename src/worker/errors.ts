/** The results service's one error shape, `{ "error": { "code", "message", "details"? } }`, and its HTTP status. */
import { TokenbenchError } from "../schema/errors.ts";

/** One error shape for every route: `{ "error": { "code", "message", "details"? } }`. */
export class ApiError extends TokenbenchError<string> {
  constructor(
    readonly status: 400 | 401 | 403 | 404 | 409 | 413 | 415 | 422 | 500 | 503,
    code: string,
    message: string,
    readonly details?: unknown,
  ) {
    super(code, message);
  }
}

export function errorBody(code: string, message: string, details?: unknown) {
  return { error: { code, message, ...(details !== undefined ? { details } : {}) } };
}
