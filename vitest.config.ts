import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: "node",
          include: ["test/unit/**/*.test.ts", "test/loopback/**/*.test.ts"],
          globalSetup: ["test/global-setup.ts"],
          // A test that runs several CLI sweeps takes 3 to 4 times as long beside six busy loops on
          // 2 cores as on idle ones: at 30 s, tests of four short sweeps timed out there while
          // passing. A hang still fails, in 90 s.
          testTimeout: 90_000,
          hookTimeout: 90_000,
          pool: "forks",
          // Two files at a time on any machine (vitest's default is one fewer than the cores: one on
          // a 2-core runner, and the suite then took 31 minutes): the timing tests compare with the
          // server's own record and allow the lateness the client measured on itself, so a second
          // file beside them is load they are built to hold.
          maxWorkers: 2,
          // projects of different maxWorkers run as groups, in turn: this one first, then workerd's
          sequence: { groupOrder: 0 },
        },
      },
      {
        // Against a real llama.cpp server (npm run real-server builds it once): npm run test:real.
        test: {
          name: "real",
          include: ["test/real/**/*.test.ts"],
          globalSetup: ["test/global-setup.ts"],
          testTimeout: 300_000,
          hookTimeout: 300_000,
          pool: "forks",
          fileParallelism: false,
          sequence: { groupOrder: 2 },
        },
      },
      {
        plugins: [
          cloudflareTest(async () => ({
            wrangler: { configPath: "./wrangler.toml" },
            miniflare: {
              bindings: {
                TEST_MIGRATIONS: await readD1Migrations("./migrations"),
                ADMIN_TOKEN: "test-admin-token",
                ALLOWED_REPOSITORIES: "acme/*,solo/one",
              },
            },
          })),
        ],
        test: {
          name: "worker",
          include: ["test/worker/**/*.test.ts"],
          sequence: { groupOrder: 1 },
          setupFiles: ["test/worker/setup.ts"],
          testTimeout: 30_000,
        },
      },
    ],
  },
});
