// Renders the README's Action reference (inputs and outputs) from action.yml, so they cannot
// drift: `npm run docs` rewrites the block between the markers; a unit test fails when stale.
import { readFileSync } from "node:fs";
import { parse } from "yaml";

export const START = "<!-- action-reference:start (generated from action.yml by npm run docs) -->";
export const END = "<!-- action-reference:end -->";

interface ActionYml {
  inputs: Record<string, { description: string; default?: string; required?: boolean }>;
  outputs: Record<string, { description: string }>;
}

const cell = (s: string) => s.replace(/\|/g, "\\|").replace(/\n/g, " ");

export function actionReference(yml: string): string {
  const a = parse(yml) as ActionYml;
  const lines = [START, "", "| input | default | description |", "|---|---|---|"];
  for (const [name, i] of Object.entries(a.inputs)) {
    const def = i.required ? "**required**" : i.default !== undefined ? `\`${cell(i.default)}\`` : "";
    lines.push(`| \`${name}\` | ${def} | ${cell(i.description)} |`);
  }
  lines.push("", "| output | description |", "|---|---|");
  for (const [name, o] of Object.entries(a.outputs)) lines.push(`| \`${name}\` | ${cell(o.description)} |`);
  lines.push("", END);
  return lines.join("\n");
}

export function withReference(readme: string, yml: string): string {
  const a = readme.indexOf(START);
  const b = readme.indexOf(END);
  if (a === -1 || b === -1) throw new Error("README has no action-reference markers");
  return readme.slice(0, a) + actionReference(yml) + readme.slice(b + END.length);
}

export function readmeIsCurrent(root: string): boolean {
  const readme = readFileSync(`${root}/README.md`, "utf8");
  return withReference(readme, readFileSync(`${root}/action.yml`, "utf8")) === readme;
}
