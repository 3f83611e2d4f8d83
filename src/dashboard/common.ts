/**
 * What every page of the dashboard shares: the root element, escaping, the API (with the read
 * token when the service needs one), charts and the page title.
 */
import embed from "vega-embed";
import type { Spec } from "../shared/charts.ts";
import { visible } from "../shared/visible.ts";

export const app = document.getElementById("app")!;
/** An attribute value (a link, an option's value): HTML-escaped, otherwise exactly as given. */
export const attr = (s: unknown) =>
  String(s ?? "").replace(
    /[&<>"']/g,
    (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!,
  );
/** Shown text: HTML-escaped, invisible format characters written out (shared/visible.ts). */
export const esc = (s: unknown) => attr(visible(String(s ?? "")));
export const fmt = (v: unknown, d = 1) => (typeof v === "number" && Number.isFinite(v) ? v.toFixed(d) : "–");

/**
 * A service with a READ_TOKEN answers reads only with it. The dashboard asks for it once (or takes
 * it from a `#read-token=...` link, removed from the address bar at once) and keeps it for this
 * browser tab only (sessionStorage), sending it as `Authorization: Bearer`.
 */
const TOKEN_KEY = "tokenbench-read-token";
const fromHash = /^#read-token=(.+)$/.exec(location.hash);
if (fromHash) {
  sessionStorage.setItem(TOKEN_KEY, decodeURIComponent(fromHash[1]!));
  history.replaceState(null, "", location.pathname + location.search);
}

export class NeedsReadToken extends Error {}

/**
 * How long a page waits for one answer of the service: past it the page says which call went
 * unanswered instead of staying blank. A page's calls take well under a second on an idle service
 * and a few on a busy 2-core machine; a minute is a service that is not answering.
 */
const API_WAIT_MS = 60_000;

export async function api<T>(path: string): Promise<T> {
  const token = sessionStorage.getItem(TOKEN_KEY);
  let res: Response;
  let body: T & { error?: { code: string; message: string } };
  try {
    res = await fetch(path, {
      headers: { accept: "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
      signal: AbortSignal.timeout(API_WAIT_MS),
    });
    body = await res.json();
  } catch (err) {
    if ((err as Error).name !== "TimeoutError") throw err;
    throw new Error(
      `the results service did not answer ${path.split("?")[0]} within ${API_WAIT_MS / 1000} s: check that it is running (its log names each request it served), then reload the page`,
    );
  }
  if (res.status === 401 && body.error?.code === "read_token_required") throw new NeedsReadToken();
  if (!res.ok)
    throw new Error(body.error ? `${body.error.code}: ${body.error.message}` : `HTTP ${res.status}`);
  return body;
}

export function askForReadToken(): void {
  const had = sessionStorage.getItem(TOKEN_KEY) !== null;
  app.innerHTML = `<h1>Read token needed</h1><p>This results service shows its data only with its read token (the operator's <code>READ_TOKEN</code>). It is kept for this tab only.</p>${had ? '<p class="error">That token was not accepted.</p>' : ""}<form id="read-token-form"><label>Read token <input id="read-token" type="password" autocomplete="off" required></label> <button type="submit">Show</button></form>`;
  document.getElementById("read-token-form")!.addEventListener("submit", (ev) => {
    ev.preventDefault();
    sessionStorage.setItem(TOKEN_KEY, (document.getElementById("read-token") as HTMLInputElement).value);
    location.reload();
  });
}

/** An SVG of this service as an object URL (fetched with the read token when there is one). */
export async function svgUrl(path: string): Promise<string | null> {
  const token = sessionStorage.getItem(TOKEN_KEY);
  const res = await fetch(path, {
    headers: token ? { authorization: `Bearer ${token}` } : {},
    signal: AbortSignal.timeout(API_WAIT_MS),
  }).catch(() => null);
  const text = res?.ok ? await res.text().catch(() => null) : null;
  return text === null ? null : URL.createObjectURL(new Blob([text], { type: "image/svg+xml" }));
}

export async function chart(el: HTMLElement, spec: Spec): Promise<void> {
  await embed(el, spec as never, { renderer: "svg", actions: false });
}

export function setTitle(t: string, crumbs: string) {
  document.title = `${visible(t)} · tokenbench`;
  app.innerHTML = `<nav class="crumbs">${crumbs}</nav><h1>${esc(t)}</h1><div id="body"></div>`;
  return document.getElementById("body")!;
}

/**
 * A run's frontier as the service draws it (GET /api/v1/runs/{id}/frontier.svg): the run in
 * colour over the base runs its verdict read, the newest darkest. One picture for the run page and
 * the pull request's page, the same one the comment shows.
 */
export function frontierImage(runId: string, runName: string, baseBranch: string): string {
  return `<h2>The frontier</h2><p class="muted">Throughput against speed per user: ${esc(runName)} in colour, ${esc(baseBranch)}'s runs its verdict read in grey (the newest darkest).</p><img class="frontier" alt="the frontier of run ${attr(runId)} over ${attr(baseBranch)}'s" src="/api/v1/runs/${attr(runId)}/frontier.svg">`;
}
