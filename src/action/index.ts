/** Action entry (dist/index.js): the main step, or the post step that stops the server. */
import * as core from "@actions/core";
import { TokenbenchError } from "../schema/errors.ts";
import { main, post } from "./main.ts";

const isPost = core.getState("isPost") === "true";
if (!isPost) core.saveState("isPost", "true");
// The one place errors meet the workflow: known errors by code and message, bugs with their stack.
(isPost ? post() : main()).catch((err: unknown) => {
  if (err instanceof TokenbenchError) core.setFailed(`[${err.code}] ${err.message}`);
  else core.setFailed(err instanceof Error ? (err.stack ?? err.message) : String(err));
});
