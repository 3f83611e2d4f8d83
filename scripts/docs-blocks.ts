// The generated blocks of the docs, so they cannot drift from their sources: the Action reference
// (docs/action.md, from action.yml) and the run-level error table (docs/cli.md, from
// src/schema/errors.ts). `npm run docs` rewrites each block between its markers; a unit test fails
// when one is stale.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
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

/**
 * A source file's role: the first sentence of its header comment (a leading block comment or run
 * of line comments), or null when it has none.
 */
export function headerLine(text: string): string | null {
  const t = text.replace(/^#!.*\n/, "").trimStart();
  let body: string;
  if (t.startsWith("/*")) body = t.slice(2, t.indexOf("*/")).replace(/^\s*\*+ ?/gm, "");
  else if (t.startsWith("//")) body = (/^(?:\/\/.*\n?)+/.exec(t)?.[0] ?? "").replace(/^\/\/+ ?/gm, "");
  else return null;
  // The opening paragraph, up to a blank line, a list, or the line that introduces one.
  const lines: string[] = [];
  for (const line of body.trim().split("\n")) {
    if (line.trim() === "" || /^\s*[-*] /.test(line)) break;
    lines.push(line);
    if (/:\s*$/.test(line)) break;
  }
  const flat = lines.join(" ").replace(/\s+/g, " ").trim();
  // Its first sentence: up to a stop followed by a capital (not "e.g." or a version number).
  const m = /^(.+?[.;])(?= [A-Z(`"]|$)/.exec(flat);
  const first = (m?.[1] ?? flat).replace(/[.:;]$/, "");
  return first === "" ? null : first;
}

/** Every source file under `dir` (recursively), sorted, with its header line. */
export function sourceFiles(root: string, dir: string): { path: string; header: string | null }[] {
  const out: { path: string; header: string | null }[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d).sort()) {
      const p = join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (/\.(ts|mjs)$/.test(name) && !name.endsWith(".d.ts"))
        out.push({ path: relative(root, p), header: headerLine(readFileSync(p, "utf8")) });
    }
  };
  walk(join(root, dir));
  return out;
}

/** The layout of src/: each folder, each file and its header line, in the folders' import order. */
export function layout(root: string): string {
  const folders = [
    "src/cli",
    "src/action",
    "src/dashboard",
    "src/worker",
    ...["documents", "sweep", "profile", "load", "results", "client", "server", "settings", "workload"].map(
      (f) => `src/core/${f}`,
    ),
    "src/mock",
    "src/shared",
    "src/schema",
  ];
  const lines: string[] = [];
  const seen = new Set<string>();
  for (const folder of folders) {
    lines.push(`**\`${folder}/\`**`, "");
    for (const f of sourceFiles(root, folder)) {
      if (seen.has(f.path)) continue;
      seen.add(f.path);
      lines.push(`- \`${f.path.slice(folder.length + 1)}\`: ${cell(f.header ?? "(no header)")}`);
    }
    lines.push("");
  }
  const missing = sourceFiles(root, "src").filter((f) => !seen.has(f.path));
  if (missing.length > 0)
    throw new Error(`layout: folders not listed: ${missing.map((f) => f.path).join(", ")}`);
  return lines.join("\n").trimEnd();
}

export const BLOCKS: readonly Block[] = [
  {
    file: "docs/development.md",
    start: "<!-- layout:start (generated from each file's header by npm run docs) -->",
    end: "<!-- layout:end -->",
    render: (root) => layout(root),
  },
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
