/**
 * How an Action step fails: it throws an ActionFailure with the message the job shows, and the
 * entry point (index.ts) sets the step failed once. A step never fails by returning.
 */
export class ActionFailure extends Error {
  override name = "ActionFailure";
}

/** Fail the step with `message`. */
export function fail(message: string): never {
  throw new ActionFailure(message);
}
