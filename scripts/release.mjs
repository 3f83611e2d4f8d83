// The release workflow's own steps, so they can be tried offline (test/unit/release.test.ts):
//   node scripts/release.mjs check-tag v1.2.3          the tag names package.json's version
//   node scripts/release.mjs major-tag v1.2.3 [--push]  v1 (annotated) moves to v1.2.3's commit;
//                                                       --push force-pushes it to origin
// As actions/typescript-action documents for Actions: users pin the major tag, which each
// release of that major version moves forward; exact tags never move.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";

const [cmd, tag, ...rest] = process.argv.slice(2);
const fail = (m) => {
  process.stderr.write(`release: ${m}\n`);
  process.exit(1);
};
const git = (...args) => execFileSync("git", args, { encoding: "utf8" }).trim();

if (!tag || !/^v\d+\.\d+\.\d+$/.test(tag))
  fail(`expected a version tag like v1.2.3, got ${JSON.stringify(tag ?? "")}`);
if (cmd === "check-tag") {
  const { version } = JSON.parse(readFileSync("package.json", "utf8"));
  if (tag !== `v${version}`)
    fail(
      `the tag ${tag} does not match package.json's version ${version}: bump the version (npm version ${tag.slice(1)}) or tag v${version}`,
    );
  process.stdout.write(`release: ${tag} matches package.json\n`);
} else if (cmd === "major-tag") {
  const major = tag.split(".")[0];
  const commit = git("rev-parse", `${tag}^{commit}`);
  git(
    "tag",
    "--force",
    "--annotate",
    major,
    "--message",
    `${major}: the latest ${major}.x.y release, now ${tag}`,
    commit,
  );
  process.stdout.write(`release: ${major} -> ${tag} (${commit.slice(0, 7)})\n`);
  if (rest.includes("--push")) git("push", "--force", "origin", `refs/tags/${major}`);
} else fail(`unknown step ${JSON.stringify(cmd ?? "")}: check-tag or major-tag`);
