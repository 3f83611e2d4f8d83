/** A sweep's own run-level errors (their codes are in RUN_ERRORS). */
import { TokenbenchError } from "../../schema/errors.ts";

export class SweepError extends TokenbenchError {}
