/** The Action's own types: the git facts of a run as the document records them. */
import type { ResultDocument } from "../schema/v1.ts";

export type GitInfo = NonNullable<ResultDocument["git"]>;
