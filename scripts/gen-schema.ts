// Writes schema/result-v1.schema.json from the zod source (src/schema/v1.ts).
// A unit test fails when the committed file is stale.
import { writeFileSync } from "node:fs";
import { jsonSchemaText } from "../src/schema/json-schema.ts";

writeFileSync(new URL("../schema/result-v1.schema.json", import.meta.url), jsonSchemaText());
console.log("wrote schema/result-v1.schema.json");
