import { readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { TOOL_VERSION } from "../../../src/core/results/version.ts";
import { jsonSchemaText } from "../../../src/schema/json-schema.ts";
import { parseResultDocument, SchemaError } from "../../../src/schema/v1.ts";

const ROOT = resolve(import.meta.dirname, "../../..");
const EXAMPLES = join(ROOT, "schema/examples");

describe("schema v1", () => {
  it("the committed JSON Schema is generated from the zod source (run npm run schema)", () => {
    expect(readFileSync(join(ROOT, "schema/result-v1.schema.json"), "utf8")).toBe(jsonSchemaText());
  });

  const examples = readdirSync(EXAMPLES).filter((f) => f.endsWith(".json"));
  it("has example documents", () => expect(examples.length).toBeGreaterThanOrEqual(2));
  for (const f of examples) {
    it(`example ${f} validates`, () => {
      const doc = parseResultDocument(JSON.parse(readFileSync(join(EXAMPLES, f), "utf8")));
      expect(doc.schema_version).toBe(1);
      if (doc.kind === "sweep") expect(doc.levels.length).toBeGreaterThan(0);
      else expect(doc.profile?.samples.length).toBeGreaterThan(0);
    });
  }

  it("rejects invalid documents with paths in the message", () => {
    const doc = JSON.parse(readFileSync(join(EXAMPLES, examples[0]!), "utf8"));
    doc.levels[0].ttft_ms.n = -1;
    delete doc.target.model;
    expect(() => parseResultDocument(doc)).toThrow(SchemaError);
    try {
      parseResultDocument(doc);
    } catch (err) {
      expect((err as SchemaError).code).toBe("schema_invalid");
      expect((err as Error).message).toContain("levels.0.ttft_ms.n");
      expect((err as Error).message).toContain("target.model");
    }
    expect(() => parseResultDocument({ ...doc, schema_version: 2 })).toThrow(SchemaError);
  });

  it("tool version matches package.json", () => {
    expect(TOOL_VERSION).toBe(JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).version);
  });
});
