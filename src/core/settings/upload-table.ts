/** The flags of `tokenbench upload` (the CLI's way into the results service); declarations only. */
import { httpUrl, number, text } from "./setting.ts";

export const UPLOAD = {
  url: httpUrl<string | null>({
    flag: "url",
    input: null,
    metavar: "URL",
    default: null,
    help: "the results service's URL (the Action's results-url)",
  }),
  token: text<string | null>({
    flag: "token",
    input: null,
    metavar: "TOKEN",
    secret: true,
    default: null,
    env: ["TOKENBENCH_API_TOKEN"],
    help: "the repository's API token for the service (the Action's api-token; POST /api/v1/admin/tokens makes one)",
  }),
  repository: text<string | null>({
    flag: "repository",
    input: null,
    metavar: "OWNER/NAME",
    default: null,
    help: "the GitHub repository the run counts for (default: the checkout's origin remote)",
  }),
  branch: text<string | null>({
    flag: "branch",
    input: null,
    metavar: "NAME",
    default: null,
    help: "the branch the run measured (default: the checkout's branch); trends and badges are per branch",
  }),
  sha: text<string | null>({
    flag: "sha",
    input: null,
    metavar: "SHA",
    default: null,
    help: "the commit the run measured (default: the checkout's HEAD)",
  }),
  baseBranch: text<string | null>({
    flag: "base-branch",
    input: null,
    metavar: "NAME",
    default: null,
    help: "for a pull request's run: the branch it merges into, whose runs are its baseline",
  }),
  pr: number<number | null>({
    flag: "pr",
    input: null,
    metavar: "N",
    default: null,
    check: (n) => Number.isInteger(n) && n > 0,
    what: "a pull request number (a positive integer)",
    help: "for a pull request's run: its number (the dashboard's PR page lists it)",
  }),
  testbed: text<string | null>({
    flag: "testbed",
    input: null,
    metavar: "NAME",
    default: null,
    help: "a name for the hardware + server + model; runs are compared only within one (default: the document's)",
  }),
};
