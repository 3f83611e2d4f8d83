/** The flavour modules by name. */
import type { FlavorModule } from "../flavor.ts";
import type { Flavor } from "../options.ts";
import { freetoken } from "./freetoken.ts";
import { llamacpp } from "./llamacpp.ts";
import { minimal } from "./minimal.ts";
import { sglang } from "./sglang.ts";
import { vllm } from "./vllm.ts";

export const FLAVOR_MODULES: Readonly<Record<Flavor, FlavorModule>> = {
  vllm,
  sglang,
  freetoken,
  llamacpp,
  minimal,
};
