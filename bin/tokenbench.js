#!/usr/bin/env node
// Thin launcher: the CLI is bundled into dist/cli.js by `npm run build` (committed).
import "../dist/cli.js";
