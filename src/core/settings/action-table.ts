/** The settings only the Action has (no CLI flag): publish, merge, baselines, the comment; declarations only. */
import { boolean, httpUrl, number, text } from "./setting.ts";

/** The Action's own inputs (no CLI flag). */
export const ACTION = {
  publishResults: text<string | null>({
    flag: null,
    input: "publish-results",
    default: null,
    help: "Publish-only mode: comma-separated results JSON files written by an earlier job (the fork-safe workflow_run pattern); nothing is measured",
  }),
  mergeResults: text<string | null>({
    flag: null,
    input: "merge-results",
    default: null,
    help: "Merge mode: comma-separated results JSON files of one run's shards (the matrix's `shard` jobs); they are merged into one document, which is uploaded, compared and commented like a measured one; nothing is measured",
  }),
  mergeClockToleranceMs: number<number>({
    flag: null,
    input: "clock-tolerance-ms",
    default: 50,
    check: (n) => n >= 0 && n <= 60_000,
    what: "a number of milliseconds from 0 to 60000",
    help: "Merge mode: how far apart the shards' level starts may be (the runners' clock skew plus their scheduling)",
  }),
  profile: boolean({
    flag: null,
    input: "profile",
    default: false,
    help: "Also run the single-stream serving profile",
  }),
  testbed: text<string | null>({
    flag: null,
    input: "testbed",
    default: null,
    help: "A name for this testbed (hardware + server + model + workload); results are compared only within one",
  }),
  resultsUrl: httpUrl<string | null>({
    flag: null,
    input: "results-url",
    default: null,
    help: "URL of the tokenbench results service; empty = no upload, no comparison",
  }),
  audience: text<string>({
    flag: null,
    input: "audience",
    default: "tokenbench",
    help: "Audience of the GitHub OIDC token sent to the results service",
  }),
  apiToken: text<string | null>({
    flag: null,
    input: "api-token",
    default: null,
    secret: true,
    help: "Repository API token for the results service (used when no OIDC token is available)",
  }),
  baseline: text<string | null>({
    flag: null,
    input: "baseline",
    default: null,
    help: "Compare without a results service: a results file in the repository, or `artifact` (the results artifact of the newest successful run of this workflow on the base branch; needs actions: read)",
  }),
  readToken: text<string | null>({
    flag: null,
    input: "read-token",
    default: null,
    secret: true,
    help: "The results service's READ_TOKEN, when it has one: needed to compare against the base branch (and so for fail-on-regression)",
  }),
  dashboardUrl: httpUrl<string | null>({
    flag: null,
    input: "dashboard-url",
    default: null,
    help: "Dashboard base URL for links (default results-url)",
  }),
  githubToken: text<string | null>({
    flag: null,
    input: "github-token",
    default: null,
    secret: true,
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a GitHub expression, as action.yml writes it
    defaultText: "${{ github.token }}",
    help: "Token used to comment on the pull request",
  }),
  comment: boolean({
    flag: null,
    input: "comment",
    default: true,
    help: "Post (and update) a sticky PR comment",
  }),
  failOnRegression: boolean({
    flag: null,
    input: "fail-on-regression",
    default: false,
    help: "Fail the step when compare reports a regression",
  }),
  failOnUploadError: boolean({
    flag: null,
    input: "fail-on-upload-error",
    default: false,
    help: "Fail the step when the upload to results-url fails (otherwise a warning; results stay in the artifact)",
  }),
  artifactName: text<string>({
    flag: null,
    input: "artifact-name",
    default: "tokenbench-results",
    help: "Name of the artifact holding the raw results",
  }),
  resultsDir: text<string>({
    flag: null,
    input: "results-dir",
    default: "tokenbench-results",
    help: "Where results are written in the workspace",
  }),
};
