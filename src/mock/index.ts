/** Library entry: `start({ port: 0, ... })` returns `{ url, close }`. */

export type {
  FaultKind,
  FaultSpec,
  Flavor,
  MockOptions,
  ProtocolVariant,
  ReasoningField,
} from "./options.ts";
export {
  DEFAULT_MOCK_OPTIONS,
  FAULT_KINDS,
  FLAVORS,
  PROTOCOL_VARIANTS,
  parseFault,
  REASONING_FIELDS,
} from "./options.ts";
export type { MockServer, MockStats } from "./server.ts";
export { start } from "./server.ts";
export { countTokens, tokenize } from "./tokenizer.ts";
