// Every command the docs tell a user to type is one the CLI takes: each `tokenbench ...` line of
// README.md, CONCEPTS.md and docs/*.md (in their code blocks) is run with --help added, which
// parses every flag it names (an unknown or misspelt one exits 2) without running anything. A
// wrong line planted in a copy of the docs is caught the same way, so the check can fail.
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { RUN_ERRORS } from "../../../src/schema/errors.ts";
import { CLI, ROOT } from "../../helpers/cli.ts";

const DOCS = [
  "README.md",
  "CONCEPTS.md",
  ...readdirSync(join(ROOT, "docs"))
    .filter((f) => f.endsWith(".md"))
    .map((f) => `docs/${f}`),
];

/** The words of a shell line up to its first operator or comment, quotes removed. */
function words(line: string): string[] {
  const out: string[] = [];
  let cur = "";
  let quote: string | null = null;
  let started = false;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i]!;
    if (quote !== null) {
      if (ch === quote) quote = null;
      else cur += ch;
      continue;
    }
    if (ch === "'" || ch === '"') {
      quote = ch;
      started = true;
      continue;
    }
    if (/\s/.test(ch)) {
      if (started) out.push(cur);
      cur = "";
      started = false;
      continue;
    }
    // an operator or a comment ends the command
    if ("|;&>#".includes(ch) && !started) break;
    cur += ch;
    started = true;
  }
  if (started) out.push(cur);
  return out;
}

/** Each documented tokenbench command: [file, line number, its arguments after `tokenbench`]. */
function documentedCommands(text: string, file: string): [string, number, string[]][] {
  const out: [string, number, string[]][] = [];
  const lines = text.split("\n");
  let fence = false;
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i]!;
    if (/^\s*```/.test(raw)) {
      fence = !fence;
      continue;
    }
    if (!fence) continue;
    let line = raw.replace(/^\s*\$\s+/, "");
    // a command continued over lines with a trailing backslash
    while (/\\\s*$/.test(line) && i + 1 < lines.length) line = `${line.replace(/\\\s*$/, " ")}${lines[++i]!}`;
    // `npx tokenbench ...` anywhere (a workflow's run: line too), or a line that starts with it
    const m = /(?:^\s*|\bnpx\s+)tokenbench\s+(.*)$/.exec(line);
    if (!m || /^\s*(#|\/\/|uses:)/.test(line)) continue;
    const args = words(m[1]!);
    if (args.length > 0 && /^[a-z]+$/.test(args[0]!)) out.push([file, i + 1, args]);
  }
  return out;
}

/** Why the CLI refuses a command's flags, or null when it takes them. */
function refusal(args: string[]): string | null {
  try {
    execFileSync(process.execPath, [CLI, ...args, "--help"], {
      cwd: ROOT,
      stdio: ["ignore", "ignore", "pipe"],
    });
    return null;
  } catch (err) {
    return String((err as { stderr?: Buffer }).stderr ?? err).trim();
  }
}

describe("the docs' commands", () => {
  const all = DOCS.flatMap((f) => documentedCommands(readFileSync(join(ROOT, f), "utf8"), f));

  it("there are many: the README's and docs/cli.md's, of most commands", () => {
    expect(all.length).toBeGreaterThan(30);
    const files = new Set(all.map(([f]) => f));
    for (const f of ["README.md", "docs/cli.md"]) expect(files).toContain(f);
    expect(new Set(all.map(([, , a]) => a[0])).size).toBeGreaterThanOrEqual(8);
  });

  it("each is a command the CLI has, with flags it takes", () => {
    const refused = all
      .map(([f, n, args]) => [`${f}:${n}: tokenbench ${args.join(" ")}`, refusal(args)] as const)
      .filter(([, why]) => why !== null);
    expect(refused).toEqual([]);
  }, 180_000);

  it("a wrong line is caught: a misspelt flag and an unknown command", () => {
    const planted = documentedCommands(
      "```sh\nnpx tokenbench sweep --levls 1,2 --out r.json   # a typo\ntokenbench comapre a.json b.json\n```\n",
      "planted.md",
    );
    expect(planted.map(([, , a]) => a)).toEqual([
      ["sweep", "--levls", "1,2", "--out", "r.json"],
      ["comapre", "a.json", "b.json"],
    ]);
    expect(refusal(planted[0]![2])).toMatch(/unknown flag --levls \(did you mean --levels\?\)/);
    expect(refusal(planted[1]![2])).toMatch(/unknown command "comapre" \(did you mean "compare"\?\)/);
  });

  it("every error code the docs name in brackets is one the CLI can exit with", () => {
    const named = new Set(
      DOCS.flatMap((f) =>
        [...readFileSync(join(ROOT, f), "utf8").matchAll(/error \[([a-z_]+)\]/g)].map((m) => m[1]!),
      ),
    );
    expect([...named].filter((c) => !(c in RUN_ERRORS))).toEqual([]);
  });
});
