// Secrets in the Action's logs: every secret input is registered with the runner (::add-mask::)
// at start, and the Action masks them itself in what it prints, its job summary and outputs,
// even when the server under test and the results service echo them back in their errors.
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runAction } from "../../../scripts/run-action.ts";
import { secretInputs } from "../../../src/action/secrets.ts";
import { echoingInferenceServer, echoingResultsService } from "../../helpers/echo-servers.ts";

const SECRETS = {
  "api-token": "tbk_service_token_123456",
  "read-token": "tbr_read_token_654321",
  "server-api-key": "sk-live-abcdef123456",
  "github-token": "ghs_test_token_777777",
};
const HEADER = "hdr-secret-9876";

describe("secretInputs: what the Action masks", () => {
  it("the four secret inputs, the credentials in headers, and their encoded forms", () => {
    const given: Record<string, string> = {
      ...SECRETS,
      headers: `X-Api-Key: ${HEADER}\nX-Trace: visible-value`,
    };
    const get = (n: string) => given[n] ?? "";
    const got = secretInputs(get);
    for (const v of [...Object.values(SECRETS), HEADER]) {
      expect(got).toContain(v);
      expect(got).toContain(Buffer.from(v).toString("base64"));
    }
    expect(got).not.toContain("visible-value");
    expect(secretInputs(() => "")).toEqual([]);
  });
});

describe("the Action against servers that echo credentials", () => {
  let inference: Awaited<ReturnType<typeof echoingInferenceServer>>;
  let service: Awaited<ReturnType<typeof echoingResultsService>>;
  beforeAll(async () => {
    [inference, service] = await Promise.all([echoingInferenceServer(), echoingResultsService()]);
  });
  afterAll(async () => {
    await Promise.all([inference?.close(), service?.close()]);
  });

  it("no secret in the log, the summary or the outputs; each registered with the runner", {
    timeout: 90_000,
  }, async () => {
    const r = await runAction(
      {
        "base-url": inference.url,
        levels: "1",
        requests: "3",
        "max-tokens": "4",
        warmup: "0",
        "max-error-rate": "100",
        headers: `X-Api-Key: ${HEADER}`,
        "results-url": service.url,
        baseline: "",
        ...SECRETS,
      },
      {
        GITHUB_REPOSITORY: "acme/secrets",
        GITHUB_EVENT_NAME: "push",
        GITHUB_REF: "refs/heads/main",
        GITHUB_SHA: "5".repeat(40),
        GITHUB_RUN_ID: "77",
      },
      {},
    );
    // the echoes happened, masked: the server's 500s and the service's refusal are reported
    expect(r.log).toMatch(/HTTP 500: upstream refused authorization=\*\*\* x-api-key=\*\*\*/);
    expect(r.log).toMatch(/upload to .* failed.*not accepted: authorization=Bearer \*\*\*/);
    for (const v of [...Object.values(SECRETS), HEADER])
      expect(r.log.split("\n").filter((l) => l === `::add-mask::${v}`)).toHaveLength(1);
    const outside = r.log
      .split("\n")
      .filter((l) => !l.startsWith("::add-mask::"))
      .join("\n");
    const results = readFileSync(r.outputs["results-path"]!, "utf8");
    for (const [where, text] of Object.entries({ log: outside, summary: r.summary, results, ...r.outputs }))
      for (const v of [...Object.values(SECRETS), HEADER, encodeURIComponent(SECRETS["api-token"])])
        expect(text, `${where} holds ${v}`).not.toContain(v);
  });
});
