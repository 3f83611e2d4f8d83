/** Action entry (dist/index.js): the main step, or the post step that stops the server. */
import * as core from "@actions/core";
import { main, post } from "./main.ts";

const isPost = core.getState("isPost") === "true";
if (!isPost) core.saveState("isPost", "true");
(isPost ? post() : main()).catch((err: unknown) => {
  core.setFailed(err instanceof Error ? (err.stack ?? err.message) : String(err));
});
