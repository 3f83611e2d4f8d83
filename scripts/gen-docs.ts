// `npm run docs`: every generated block of the docs rendered anew from its source (docs-blocks.ts).
import { readFileSync, writeFileSync } from "node:fs";
import { BLOCKS, withBlock } from "./docs-blocks.ts";

for (const b of BLOCKS) {
  writeFileSync(b.file, withBlock(readFileSync(b.file, "utf8"), b, "."));
  console.log(`${b.file}: ${b.start.replace(/^<!-- |:start.*$/g, "")} regenerated`);
}
