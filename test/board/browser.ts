import { mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { chromium, type Browser } from "playwright-core";

/**
 * Chromium from Debian's packages (`apt-get install chromium`; .ci/run installs it when missing),
 * driven by playwright-core, whose own browser download cannot work here. Playwright gives each
 * launch a fresh, throwaway user-data folder of its own (passing --user-data-dir to `launch` is
 * refused), so no profile carries over between runs.
 */
const CHROMIUM = "/usr/bin/chromium";

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      "--headless",
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

/** Where a test run's screenshots go (git-ignored: reports/). */
function screenshotDir(): string {
  const dir = resolve("reports", "screenshots");
  mkdirSync(dir, { recursive: true });
  return dir;
}

export const screenshotPath = (name: string) => join(screenshotDir(), `${name}.png`);

/** The two widths every page is looked at: a desktop and a small phone. */
export const VIEWPORTS = {
  desktop: { width: 1280, height: 800 },
  phone: { width: 375, height: 740 },
} as const;
