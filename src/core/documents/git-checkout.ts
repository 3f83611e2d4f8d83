/**
 * What a git checkout says about the run a document came from: the commit, the branch and the
 * GitHub repository of its `origin` remote, read with `git` itself. Each is null where the
 * checkout cannot say (no git, a detached HEAD, a remote that is not GitHub's).
 */
import { execFileSync } from "node:child_process";

export interface Checkout {
  sha: string | null;
  branch: string | null;
  repository: string | null;
}

function git(dir: string, args: string[]): string | null {
  try {
    const out = execFileSync("git", args, {
      cwd: dir,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    });
    const line = out.trim();
    return line === "" ? null : line;
  } catch {
    return null;
  }
}

/**
 * `owner/name` of a GitHub remote URL: https://github.com/o/n(.git), git@github.com:o/n(.git),
 * ssh://git@github.com/o/n(.git); null for any other host.
 */
export function githubRepository(remote: string): string | null {
  const m =
    /^(?:https?:\/\/(?:[^@/]+@)?github\.com\/|git@github\.com:|ssh:\/\/git@github\.com\/)([^/\s]+)\/([^/\s]+?)(?:\.git)?\/?$/.exec(
      remote.trim(),
    );
  return m ? `${m[1]}/${m[2]}` : null;
}

export function readCheckout(dir: string): Checkout {
  const remote = git(dir, ["config", "--get", "remote.origin.url"]);
  return {
    sha: git(dir, ["rev-parse", "HEAD"]),
    // `symbolic-ref` fails on a detached HEAD (a CI checkout of one commit): no branch then
    branch: git(dir, ["symbolic-ref", "--quiet", "--short", "HEAD"]),
    repository: remote === null ? null : githubRepository(remote),
  };
}
