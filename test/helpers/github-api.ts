// A stand-in for the GitHub REST API's issue-comment endpoints that records every request.
import http from "node:http";
import type { AddressInfo } from "node:net";

export interface Recorded {
  method: string;
  path: string;
  body: unknown;
  auth: string | undefined;
}

export async function startGitHubApi(
  opts: {
    forbid?: boolean;
    pulls?: { number: number; head: { sha: string; label: string }; base: { ref: string } }[];
    /** Workflow runs with their artifacts (zip bodies), for baseline: artifact. */
    runs?: {
      id: number;
      name: string;
      branch: string;
      head_sha: string;
      /** The run's event (default push) and its head repository (default the one asked about). */
      event?: string;
      head_repository?: string;
      artifacts: { id: number; name: string; zip: Buffer }[];
    }[];
  } = {},
) {
  const requests: Recorded[] = [];
  const comments: { id: number; body: string }[] = [];
  let nextId = 100;
  const srv = http.createServer((req, res) => {
    let b = "";
    req.on("data", (d) => {
      b += d;
    });
    req.on("end", () => {
      const body = b ? JSON.parse(b) : null;
      const url = new URL(req.url ?? "/", "http://x");
      requests.push({ method: req.method ?? "", path: url.pathname, body, auth: req.headers.authorization });
      const send = (status: number, j: unknown) => {
        res.writeHead(status, { "content-type": "application/json" });
        res.end(JSON.stringify(j));
      };
      if (opts.forbid && req.method !== "GET")
        return send(403, { message: "Resource not accessible by integration" });
      if (/^\/repos\/[^/]+\/[^/]+\/actions\/runs$/.test(url.pathname)) {
        const branch = url.searchParams.get("branch");
        const runs = (opts.runs ?? []).filter((r) => r.branch === branch);
        const asked = url.pathname.split("/").slice(2, 4).join("/");
        return send(200, {
          total_count: runs.length,
          // as GitHub lists them: a fork's pull request run shows up under its own branch name
          workflow_runs: runs.map(({ artifacts: _, event, head_repository, ...r }) => ({
            ...r,
            head_branch: r.branch,
            event: event ?? "push",
            head_repository: { full_name: head_repository ?? asked },
          })),
        });
      }
      let a = /^\/repos\/[^/]+\/[^/]+\/actions\/runs\/(\d+)\/artifacts$/.exec(url.pathname);
      if (a) {
        const run = (opts.runs ?? []).find((r) => r.id === Number(a![1]));
        const name = url.searchParams.get("name");
        const arts = (run?.artifacts ?? []).filter((x) => name === null || x.name === name);
        return send(200, {
          total_count: arts.length,
          artifacts: arts.map(({ zip: _, ...x }) => ({ ...x, expired: false })),
        });
      }
      a = /^\/repos\/[^/]+\/[^/]+\/actions\/artifacts\/(\d+)\/zip$/.exec(url.pathname);
      if (a) {
        res.writeHead(302, {
          location: `http://127.0.0.1:${(srv.address() as AddressInfo).port}/blob/${a[1]}.zip`,
        });
        return res.end();
      }
      a = /^\/blob\/(\d+)\.zip$/.exec(url.pathname);
      if (a) {
        const art = (opts.runs ?? []).flatMap((r) => r.artifacts).find((x) => x.id === Number(a![1]));
        if (!art) return send(404, { message: "Not Found" });
        res.writeHead(200, { "content-type": "application/zip", "content-length": art.zip.length });
        return res.end(art.zip);
      }
      if (/^\/repos\/[^/]+\/[^/]+\/pulls$/.test(url.pathname) && req.method === "GET") {
        const head = url.searchParams.get("head");
        return send(
          200,
          (opts.pulls ?? []).filter((p) => p.head.label === head),
        );
      }
      let m = /^\/repos\/[^/]+\/[^/]+\/issues\/(\d+)\/comments$/.exec(url.pathname);
      if (m && req.method === "GET") {
        const page = Number(url.searchParams.get("page") ?? "1");
        return send(200, page === 1 ? comments : []);
      }
      if (m && req.method === "POST") {
        const c = { id: nextId++, body: (body as { body: string }).body };
        comments.push(c);
        return send(201, { ...c, html_url: `https://github.example/c/${c.id}` });
      }
      m = /^\/repos\/[^/]+\/[^/]+\/issues\/comments\/(\d+)$/.exec(url.pathname);
      if (m && req.method === "PATCH") {
        const c = comments.find((x) => x.id === Number(m![1]));
        if (!c) return send(404, { message: "Not Found" });
        c.body = (body as { body: string }).body;
        return send(200, { ...c, html_url: `https://github.example/c/${c.id}` });
      }
      send(404, { message: "Not Found" });
    });
  });
  await new Promise<void>((r) => srv.listen(0, "127.0.0.1", () => r()));
  return {
    url: `http://127.0.0.1:${(srv.address() as AddressInfo).port}`,
    requests,
    comments,
    close: () =>
      new Promise<void>((r) => {
        srv.closeAllConnections();
        srv.close(() => r());
      }),
  };
}
