import type { ResultDocument } from "../schema/v1.ts";

export type GitInfo = NonNullable<ResultDocument["git"]>;
