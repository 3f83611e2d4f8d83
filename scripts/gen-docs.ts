import { readFileSync, writeFileSync } from "node:fs";
import { withReference } from "./action-docs.ts";

const readme = readFileSync("README.md", "utf8");
writeFileSync("README.md", withReference(readme, readFileSync("action.yml", "utf8")));
console.log("README.md action reference regenerated from action.yml");
