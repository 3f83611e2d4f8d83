/** JSON Schema rendering of schema v1 (draft 2020-12), from the zod source. */
import { z } from "zod";
import { ResultDocument } from "./v1.ts";

export function jsonSchemaText(): string {
  const schema = z.toJSONSchema(ResultDocument, { target: "draft-2020-12", io: "input" });
  const doc = {
    $id: "https://tokenbench.dev/schema/result-v1.schema.json",
    title: "tokenbench result document, schema v1",
    ...schema,
  };
  return `${JSON.stringify(doc, null, 2)}\n`;
}
