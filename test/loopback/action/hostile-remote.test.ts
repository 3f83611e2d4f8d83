// Foreign error bodies: GitHub's API and the results service behind a proxy that answers HTML, a
// cut body or nothing. Every JSON read names the service and request, the status and the first
// bytes, shortened; none says "Unexpected token".
import type http from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import closed from "../../../schema/examples/closed-sweep.json" with { type: "json" };
import { artifactBaseline, BaselineError } from "../../../src/action/baseline.ts";
import { GitHubError, upsertStickyComment } from "../../../src/action/comment.ts";
import { findForkPullRequest } from "../../../src/action/context.ts";
import { fetchCompare, uploadResults } from "../../../src/core/documents/publish.ts";
import { RemoteAnswerError } from "../../../src/core/documents/remote.ts";
import { parseResultDocument } from "../../../src/schema/v1.ts";
import { rawServer } from "../../helpers/servers.ts";

const PAGE = `<!DOCTYPE html><html><head><title>502 Bad Gateway</title></head><body>${"<p>the proxy is sad</p>".repeat(2000)}</body></html>`;

/** path prefix -> [status, content type, body] */
const ANSWERS: Record<string, [number, string, string]> = {
  "/html200/": [200, "text/html; charset=utf-8", PAGE],
  "/html502/": [502, "text/html", PAGE],
  "/cut/": [201, "application/json", '{"id": 12, "html_u'],
  "/empty/": [200, "application/json", ""],
};
let server: Awaited<ReturnType<typeof rawServer>>;

beforeAll(async () => {
  server = await rawServer((req: http.IncomingMessage, res: http.ServerResponse) => {
    req.resume();
    const hit = Object.entries(ANSWERS).find(([p]) => req.url!.startsWith(p));
    const [status, type, body] = hit?.[1] ?? [404, "text/plain", "no"];
    res.writeHead(status, { "content-type": type }).end(body);
  });
});
afterAll(() => server?.close());

const gh = (prefix: string) => ({ apiUrl: `${server.url}${prefix}`, token: "t", repository: "acme/infer" });

async function thrown(p: Promise<unknown>): Promise<Error> {
  try {
    await p;
  } catch (err) {
    return err as Error;
  }
  throw new Error("did not throw");
}

/** Names the service and request, the status and the first bytes, one line and shortened. */
function named(message: string, service: RegExp, status: number, type: string): void {
  expect(message).toMatch(service);
  expect(message).toContain(`HTTP ${status} (${type})`);
  expect(message).not.toMatch(/Unexpected token|is not valid JSON|Unexpected end/);
  expect(message).not.toContain("\n");
  expect(message.length).toBeLessThan(500); // not the 46 kB page
}

describe("GitHub's API answering what is not its JSON", () => {
  it("comments: an HTML page with a 200, a 502 page, a cut body", async () => {
    const a = await thrown(upsertStickyComment(gh("/html200"), 7, "<!-- m -->", "body"));
    expect(a).toBeInstanceOf(RemoteAnswerError);
    named(a.message, /GitHub's API \(GET \/repos\/acme\/infer\/issues\/7\/comments\)/, 200, "text/html");
    expect(a.message).toContain('"<!DOCTYPE html><html><head><title>502 Bad Gateway');
    expect(a.message).toMatch(/…", not the JSON it speaks$/);
    const b = await thrown(upsertStickyComment(gh("/html502"), 7, "<!-- m -->", "body"));
    expect(b).toBeInstanceOf(GitHubError);
    expect((b as GitHubError).status).toBe(502);
    named(b.message, /^listing comments: GitHub's API/, 502, "text/html");
  });

  it("the pull request lookup of a workflow_run says why it found none", async () => {
    const problems: string[] = [];
    const payload = {
      workflow_run: { head_sha: "a".repeat(40), head_branch: "f", head_repository: { full_name: "x/infer" } },
    };
    expect(await findForkPullRequest(gh("/html200"), payload, (m) => problems.push(m))).toBeNull();
    expect(await findForkPullRequest(gh("/empty"), payload, (m) => problems.push(m))).toBeNull();
    expect(problems).toHaveLength(2);
    named(problems[0]!, /GitHub's API \(GET \/repos\/acme\/infer\/pulls\)/, 200, "text/html");
    expect(problems[1]).toContain("an empty body");
  });

  it("the artifact baseline's run list", async () => {
    const e = await thrown(
      artifactBaseline({ ...gh("/html200"), workflow: null, artifactName: "tokenbench-results" }, "main"),
    );
    expect(e).toBeInstanceOf(BaselineError);
    named(e.message, /GitHub's API \(GET \/repos\/acme\/infer\/actions\/runs\)/, 200, "text/html");
  });
});

describe("the results service behind a proxy", () => {
  const doc = parseResultDocument(structuredClone(closed));

  it("compare: HTML with a 200, a 502 page", async () => {
    for (const [prefix, status] of [
      ["/html200", 200],
      ["/html502", 502],
    ] as const) {
      const r = await fetchCompare(`${server.url}${prefix}`, "acme/infer", "0123456789abcdef", "main", null);
      expect(r.ok).toBe(false);
      named((r as { error: string }).error, /the results service \(GET .*\/compare\)/, status, "text/html");
    }
  });

  it("upload: a 200 HTML page is not a stored run; a cut 201 neither", async () => {
    const retry = { attempts: 1, baseDelayMs: 1 };
    for (const [prefix, status, type] of [
      ["/html200", 200, "text/html"],
      ["/cut", 201, "application/json"],
    ] as const) {
      const r = await uploadResults(`${server.url}${prefix}`, doc, "t", retry);
      expect(r.ok, prefix).toBe(false);
      named(r.error!, /the results service \(POST .*\/api\/v1\/runs\)/, status, type);
      expect(r.error).toContain("not the JSON it speaks");
    }
  });
});
