/**
 * The browser of the browser tests: Debian's chromium at /usr/bin/chromium, driven by playwright-core (no browser is
 * ever downloaded), headless, without the sandbox (CI runs as root in a container), GPU or background traffic.
 */
import { chromium, type Browser } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';

/** Launch headless Chromium; the caller closes it (browser.close()) in its afterAll. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'] });
}
