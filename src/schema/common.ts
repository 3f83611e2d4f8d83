/** Building blocks shared by the parts of schema v1. */
import { z } from "zod";

export const num = z.number();
export const nullableNum = z.number().nullable();

/** A failed request: a stable code (see src/core/client/request-errors.ts) and the message as received. */
export const RequestError = z.object({ code: z.string(), message: z.string() });
