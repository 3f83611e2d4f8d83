/**
 * Hostile comment inputs (#11): names that come from the server under test or from an untrusted
 * artifact are rendered into the PR comment. Each must stay inert text, the comment must carry
 * exactly one marker (at its start), and the size cap must never cut the marker or a table row.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { GITHUB_COMMENT_LIMIT, mdText, renderComment, stickyMarker } from "../../../src/action/comment.ts";
import { parseResultDocument, type ResultDocument } from "../../../src/schema/v1.ts";
import { documentPoints } from "../../../src/shared/measures.ts";
import { pairVerdict } from "../../helpers/verdict.ts";

const example = (): ResultDocument =>
  parseResultDocument(JSON.parse(readFileSync("schema/examples/closed-sweep.json", "utf8")));

const otherMarker = stickyMarker("victim-testbed", "closed 1,2");
const HOSTILE: Record<string, string> = {
  heading: "# Approved by security\n## really",
  taskList: "- [x] reviewed",
  mention: "@octocat please merge",
  teamMention: "@acme/maintainers",
  image: "![x](https://evil.example/pixel.png)",
  link: "[click](javascript:alert(1))",
  codeFence: "```\nrm -rf /\n```",
  backtickBreakout: "`a` </code><img src=x onerror=alert(1)>",
  htmlComment: "<!-- tokenbench:0000000000000000 -->",
  markerCopy: otherMarker,
  mermaidClick: 'x"]\n  click A "https://evil.example"',
  tableBreak: "a | b | c\n|---|",
  details: "<details open><summary>hi</summary>",
  math: "$$\\huge{x}$$",
  control: "a\u0000b\u001b[31mred\u2028c",
  bidiOverride: "llama\u202Etxt.exe",
  bidiIsolates: "a\u2066b\u2067c\u2068d\u2069e\u200Ff\u061C",
  zeroWidth: "mock\u200B-model\u200D\u2060",
  byteOrderMark: "\uFEFFmodel",
  tagCharacters: "model\u{E0041}\u{E007F}",
};

/** What a rendered untrusted string must never contain. */
function assertInert(rendered: string, what: string): void {
  expect(rendered, what).not.toMatch(/[<>`|[\]@\n]/);
  expect(rendered, what).not.toContain("!-");
  expect(rendered, what).not.toContain("$$");
  // nothing invisible that could reorder or hide the text after it
  expect(rendered, what).not.toMatch(/[\p{Cf}\u2028\u2029]/u);
}

describe("mdText makes untrusted strings inert", () => {
  for (const [kind, s] of Object.entries(HOSTILE)) {
    it(kind, () => {
      assertInert(mdText(s), kind);
    });
  }
  it("caps the length", () => {
    expect([...mdText("m".repeat(10_000))].length).toBeLessThanOrEqual(80);
  });
  it("writes invisible format characters out, where a reviewer sees them", () => {
    expect(mdText("gpt\u202Egnp.exe")).toBe("gpt&#91;U&#43;202E&#93;gnp.exe");
    expect(mdText("a\u200Bb")).toBe("a&#91;U&#43;200B&#93;b");
    // right-to-left letters are text, not format characters: left as they are
    expect(mdText("نموذج")).toBe("نموذج");
  });
  it("leaves a plain model name readable", () => {
    expect(mdText("Qwen/Qwen2.5-0.5B-Instruct")).toBe("Qwen/Qwen2.5-0.5B-Instruct");
  });
});

describe("the rendered comment with hostile names", () => {
  const render = (model: string, testbed: string, baseBranch: string, sha: string | null = "abc1234") => {
    const doc = example();
    doc.target.model = model;
    if (doc.git) doc.git.sha = sha;
    else
      doc.git = {
        sha,
        ref: null,
        branch: "x",
        base_branch: baseBranch,
        pr_number: 1,
        workflow_run_id: null,
        run_attempt: null,
      };
    const pts = documentPoints(doc);
    return renderComment({ doc, testbed, verdict: pairVerdict(pts, pts), baseBranch, links: {} });
  };
  for (const [kind, s] of Object.entries(HOSTILE)) {
    it(`${kind} as model, testbed and base branch`, () => {
      const md = render(s, s, s);
      const marker = stickyMarker(s, "closed 1,4");
      // exactly one marker, at the start; no other tokenbench marker anywhere
      expect(md.startsWith(`${marker}\n`)).toBe(true);
      expect(md.split("<!--").length - 1).toBe(1);
      expect(md).not.toContain(otherMarker);
      // the untrusted text adds no line of its own: same line structure as a benign render
      expect(md.split("\n").length).toBe(render("m", "t", "main").split("\n").length);
      const [, heading, , intro] = md.split("\n");
      assertInert(heading!.replace("### tokenbench: ", ""), `${kind} heading`);
      expect(intro).not.toMatch(/@\w/);
      expect(intro).not.toContain("![");
    });
  }
  it("a sha that is not a sha is not shown", () => {
    const md = render("m", "t", "main", "`) ![x](y)");
    expect(md).toContain("this run");
    expect(md).not.toContain("![x]");
  });
  it("a 100,000-character model name: one comment, marker intact, every row whole", () => {
    const md = render("M".repeat(100_000), "t".repeat(100_000), "b".repeat(100_000));
    expect(md.length).toBeLessThan(GITHUB_COMMENT_LIMIT);
    expect(md.startsWith(stickyMarker("t".repeat(100_000), "closed 1,4"))).toBe(true);
    for (const line of md.split("\n").filter((l) => l.startsWith("|")))
      expect(line.endsWith("|"), line.slice(-40)).toBe(true);
  });
  it("under a tiny budget the cut never lands inside the marker or a row", () => {
    const doc = example();
    const pts = documentPoints(doc);
    const md = renderComment(
      {
        doc,
        testbed: "tb",
        verdict: pairVerdict(pts, pts),
        baseBranch: "main",
        links: {},
      },
      300,
    );
    expect(md.startsWith(`${stickyMarker("tb", "closed 1,4")}\n`)).toBe(true);
    for (const line of md.split("\n").filter((l) => l.startsWith("|"))) expect(line.endsWith("|")).toBe(true);
  });
});
