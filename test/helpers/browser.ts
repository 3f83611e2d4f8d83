/**
 * Debian's Chromium, driven by playwright-core, for the tests that look at the dashboard: one
 * launch and one way to open a page, so every wait allows a busy machine the same.
 */
import { existsSync } from "node:fs";
import { type Browser, chromium, type Page, type Request } from "playwright-core";

export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

/**
 * Every wait of a page, its navigation included, allows this: on a busy 2-core CI machine the
 * page, workerd and other test files share the CPU, and a load of 10 has held a page past
 * Playwright's default of 30 s.
 */
export const PAGE_WAIT_MS = 90_000;

export async function launchChromium(): Promise<Browser> {
  // `npm test` stops at once when Chromium is missing (scripts/test-prerequisites.mjs), unless
  // TOKENBENCH_SKIP_BROWSER=1 leaves the dashboard's tests out on purpose.
  if (!existsSync(CHROMIUM))
    throw new Error(
      `no Chromium at ${CHROMIUM}: install it (Debian: apt-get install chromium) or set CHROMIUM_PATH; TOKENBENCH_SKIP_BROWSER=1 skips the dashboard's tests`,
    );
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
}

const PENDING = new WeakMap<Page, Set<Request>>();

/** A new page whose every wait allows PAGE_WAIT_MS, and which keeps its unanswered requests. */
export async function newPage(browser: Browser, width = 1280): Promise<Page> {
  const page = await browser.newPage({ viewport: { width, height: 900 } });
  page.setDefaultTimeout(PAGE_WAIT_MS);
  // kept by the request itself: two calls of one URL in flight at once are two entries
  const pending = new Set<Request>();
  PENDING.set(page, pending);
  page.on("request", (r) => pending.add(r));
  page.on("requestfinished", (r) => pending.delete(r));
  page.on("requestfailed", (r) => pending.delete(r));
  return page;
}

/**
 * Waits until the dashboard's page says it is done (body[data-ready]) and, unless `want` is
 * "any", that it ended as `want`. A page that never ends, or ends otherwise, is an error that
 * names what it still waited for, what it shows, and the service's own log.
 */
export async function waitReady(page: Page, serviceLog: () => string, want = "true"): Promise<void> {
  const why = async (what: string) => {
    const shown = await page
      .$$eval("p.error", (els) => els.map((e) => e.textContent ?? "").join(" / "))
      .catch(() => "");
    const pending = [...(PENDING.get(page) ?? [])].map((r) => `${r.method()} ${r.url()}`);
    return new Error(
      `${page.url()}: ${what}${shown ? `; it shows: ${shown}` : ""}; requests unanswered: ${pending.length > 0 ? pending.join(", ") : "none"}\nthe service's log (its end):\n${serviceLog()}`,
    );
  };
  try {
    await page.waitForSelector("body[data-ready]");
  } catch {
    throw await why(`not ready within ${PAGE_WAIT_MS / 1000} s`);
  }
  const got = await page.getAttribute("body", "data-ready");
  if (want !== "any" && got !== want) throw await why(`ended "${got}", not "${want}"`);
}
