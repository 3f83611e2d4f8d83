// The generated blocks of the docs, so they cannot drift from their sources: the Action reference
// (docs/action.md, from action.yml) and the run-level error table (docs/cli.md, from
// src/schema/errors.ts). `npm run docs` rewrites each block between its markers; a unit test fails
// when one is stale.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";
import { RUN_ERRORS } from "../src/schema/errors.ts";

interface ActionYml {
  inputs: Record<string, { description: string; default?: string; required?: boolean }>;
  outputs: Record<string, { description: string }>;
}

export interface Block {
  /** The file the block lives in, from the repository root. */
  file: string;
  start: string;
  end: string;
  render(root: string): string;
}

const cell = (s: string) => s.replace(/\|/g, "\\|").replace(/\n/g, " ");

export function actionReference(yml: string): string {
  const a = parse(yml) as ActionYml;
  const lines = ["| input | default | description |", "|---|---|---|"];
  for (const [name, i] of Object.entries(a.inputs)) {
    const def = i.required ? "**required**" : i.default !== undefined ? `\`${cell(i.default)}\`` : "";
    lines.push(`| \`${name}\` | ${def} | ${cell(i.description)} |`);
  }
  lines.push("", "| output | description |", "|---|---|");
  for (const [name, o] of Object.entries(a.outputs)) lines.push(`| \`${name}\` | ${cell(o.description)} |`);
  return lines.join("\n");
}

export function errorTable(): string {
  const lines = ["| code | exit | what it means |", "|---|---:|---|"];
  for (const [code, e] of Object.entries(RUN_ERRORS))
    lines.push(`| \`${code}\` | ${e.exit} | ${cell(e.meaning)} |`);
  return lines.join("\n");
}

export const BLOCKS: readonly Block[] = [
  {
    file: "docs/action.md",
    start: "<!-- action-reference:start (generated from action.yml by npm run docs) -->",
    end: "<!-- action-reference:end -->",
    render: (root) => actionReference(readFileSync(join(root, "action.yml"), "utf8")),
  },
  {
    file: "docs/cli.md",
    start: "<!-- error-codes:start (generated from src/schema/errors.ts by npm run docs) -->",
    end: "<!-- error-codes:end -->",
    render: () => errorTable(),
  },
];

/** `text` with the block's content rendered anew between its markers. */
export function withBlock(text: string, block: Block, root: string): string {
  const a = text.indexOf(block.start);
  const b = text.indexOf(block.end);
  if (a === -1 || b === -1 || b < a)
    throw new Error(`${block.file} has no ${block.start} ... ${block.end} markers`);
  return `${text.slice(0, a)}${block.start}\n\n${block.render(root)}\n\n${text.slice(b)}`;
}

/** The files whose generated blocks differ from a fresh rendering. */
export function staleDocs(root: string): string[] {
  return BLOCKS.filter((b) => {
    const text = readFileSync(join(root, b.file), "utf8");
    return withBlock(text, b, root) !== text;
  }).map((b) => b.file);
}
