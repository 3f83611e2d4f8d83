/**
 * The Action's one GitHub API client: base URL, token, repository, headers and a deadline on
 * every call (a hung API must not hold the job), the answer read as JSON (else a
 * RemoteAnswerError), and every failed call a GitHubError naming it, the status and the first
 * bytes of the answer. The sticky comment,
 * the artifact baseline and the fork's pull request all go through it.
 */

import { failureText, fetchError, RemoteAnswerError, readJson } from "../core/documents/remote.ts";
import { TokenbenchError } from "../schema/errors.ts";

/** Every GitHub API call's deadline (a hung API must not hold the job). */
export const GITHUB_TIMEOUT_MS = 30_000;

export interface GitHubApi {
  apiUrl: string;
  token: string;
  repository: string;
  /** Deadline of each call (default 30 s). */
  timeoutMs?: number;
  fetchImpl?: typeof fetch;
}

export class GitHubError extends TokenbenchError {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super("github_api", message);
  }
}

/** One call: `GET /repos/{repository}/...` and friends; the answer's JSON, or a GitHubError. */
export async function github<T>(
  gh: GitHubApi,
  method: "GET" | "POST" | "PATCH",
  path: string,
  body?: unknown,
): Promise<T> {
  const service = `GitHub's API (${method} ${path.split("?")[0]})`;
  let res: Response;
  try {
    res = await (gh.fetchImpl ?? fetch)(`${gh.apiUrl}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${gh.token}`,
        accept: "application/vnd.github+json",
        "x-github-api-version": "2022-11-28",
        "user-agent": "tokenbench-action",
        ...(body !== undefined ? { "content-type": "application/json" } : {}),
      },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      signal: AbortSignal.timeout(gh.timeoutMs ?? GITHUB_TIMEOUT_MS),
    });
  } catch (err) {
    const why = fetchError(err, gh.timeoutMs ?? GITHUB_TIMEOUT_MS);
    throw new GitHubError(0, `${service} at ${new URL(gh.apiUrl).host}: ${why}`);
  }
  if (!res.ok) throw new GitHubError(res.status, await failureText(res, service));
  // an answer that is not its JSON (a proxy's page, a cut body) is a RemoteAnswerError, named
  return readJson<T>(res, service);
}

/** `/repos/{owner}/{name}`: the repository's own paths. */
export const repoPath = (gh: GitHubApi, rest: string) => `/repos/${gh.repository}${rest}`;

/** A call's failure prefixed with the step it was part of ("listing comments: ..."). */
export async function during<T>(step: string, call: Promise<T>): Promise<T> {
  try {
    return await call;
  } catch (err) {
    if (err instanceof GitHubError) throw new GitHubError(err.status, `${step}: ${err.message}`);
    if (err instanceof RemoteAnswerError) throw new RemoteAnswerError(err.status, `${step}: ${err.message}`);
    throw err;
  }
}
