import { makeTarget, type Target } from "../../src/core/server/target.ts";

/** The mock's default target: chat API, model `mock-model`, no key. */
export function tgt(baseUrl: string, over: Partial<Parameters<typeof makeTarget>[0]> = {}): Target {
  return makeTarget({ baseUrl, api: "chat", model: "mock-model", apiKey: null, headers: {}, ...over });
}
