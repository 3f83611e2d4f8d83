/**
 * `--tools FILE --tool-choice auto|required|NAME`: the definitions in the API's own shape. Chat
 * takes them as written; the Responses API takes the same definitions flattened
 * (`{"type":"function","name":...,"parameters":...}`) and names a forced tool without `function`;
 * the Messages API takes `{name, description, input_schema}` and says "any" for "required".
 */
import type { SweepConfig } from "../../schema/v1.ts";
import type { ApiKind } from "../server/target.ts";

export interface ToolDefinition {
  type: "function";
  function: { name: string; description?: string; parameters?: Record<string, unknown>; strict?: boolean };
}

export interface ToolSettings {
  tools: ToolDefinition[];
  /** "auto", "required", or the name of one tool to force. */
  choice: string;
}

/** The tools a recorded configuration sends (checked when the file was read), or null. */
export function toolSettingsOf(cfg: SweepConfig): ToolSettings | null {
  return cfg.tools
    ? { tools: cfg.tools.definitions as unknown as ToolDefinition[], choice: cfg.tools.choice }
    : null;
}

export function toolsBody(api: ApiKind, t: ToolSettings): Record<string, unknown> {
  const forced = t.choice !== "auto" && t.choice !== "required" && t.choice !== "none";
  if (api === "messages")
    return {
      tools: t.tools.map((d) => ({
        name: d.function.name,
        ...(d.function.description !== undefined ? { description: d.function.description } : {}),
        input_schema: d.function.parameters ?? { type: "object", properties: {} },
      })),
      tool_choice: forced
        ? { type: "tool", name: t.choice }
        : { type: t.choice === "required" ? "any" : t.choice },
    };
  if (api === "responses")
    return {
      tools: t.tools.map((d) => ({ type: "function", ...d.function })),
      tool_choice: forced ? { type: "function", name: t.choice } : t.choice,
    };
  return {
    tools: t.tools,
    tool_choice: forced ? { type: "function", function: { name: t.choice } } : t.choice,
  };
}
