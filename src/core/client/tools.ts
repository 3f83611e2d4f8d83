/**
 * `--tools FILE --tool-choice auto|required|NAME`: the definitions in the API's own shape. Chat
 * takes them as written; the Responses API takes the same definitions flattened
 * (`{"type":"function","name":...,"parameters":...}`) and names a forced tool without `function`.
 */
import type { ApiKind } from "../server/target.ts";
import type { ToolSettings } from "../workload/tools.ts";

export type { ToolSettings } from "../workload/tools.ts";

export function toolsBody(api: ApiKind, t: ToolSettings): Record<string, unknown> {
  const forced = t.choice !== "auto" && t.choice !== "required" && t.choice !== "none";
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
