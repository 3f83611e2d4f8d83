/** Action entry (dist/index.js): the main step, or the post step that stops the server. */
import * as core from "@actions/core";
import { TokenbenchError } from "../schema/errors.ts";
import { ActionFailure } from "./failure.ts";
import { InputError } from "./inputs.ts";
import { main, post } from "./main.ts";

const isPost = core.getState("isPost") === "true";
if (!isPost) core.saveState("isPost", "true");
// The one place errors meet the workflow: known errors by code and message, bugs with their stack.
(isPost ? post() : main()).catch((err: unknown) => {
  // A step's failure and a bad input say what is wrong in their own words; other known errors by code.
  if (err instanceof ActionFailure || err instanceof InputError) core.setFailed(err.message);
  else if (err instanceof TokenbenchError) core.setFailed(`[${err.code}] ${err.message}`);
  else core.setFailed(err instanceof Error ? (err.stack ?? err.message) : String(err));
});
