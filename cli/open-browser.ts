/** Open a URL in the person's browser (`gantry browse`, `gantry login --web`). Loaded only by those commands. */
import { spawn, type ChildProcess } from 'node:child_process';
import type { IO } from './io.js';

/** A browser program that has not failed within this time is taken as started (xdg-open and open return at once). */
const GRACE_MS = 1500;

/** The program that opens URLs: the `browser` setting (GANTRY_BROWSER), BROWSER, else the platform's opener. */
export function browserCommand(io: IO): string {
  return io.env.GANTRY_BROWSER || io.env.BROWSER || (process.platform === 'darwin' ? 'open' : process.platform === 'win32' ? 'start' : 'xdg-open');
}

/**
 * Start the browser on `url`. Resolves null once it started (or is still running after a moment), else the reason it
 * could not (no such program, or it failed at once), so the caller can print the URL instead.
 */
export function openBrowser(io: IO, url: string): Promise<string | null> {
  const browser = browserCommand(io);
  let child: ChildProcess;
  try {
    child = browser === 'start' && process.platform === 'win32'
      ? spawn('cmd', ['/c', 'start', '""', `"${url}"`], { stdio: 'ignore', detached: true, windowsVerbatimArguments: true })
      : spawn('/bin/sh', ['-c', `${browser} "$1"`, 'sh', url], { stdio: 'ignore', detached: true, env: io.env });
  } catch (e) {
    return Promise.resolve(`cannot start ${browser}: ${(e as Error).message}`);
  }
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      child.unref();
      resolve(null);
    }, GRACE_MS);
    const done = (why: string | null) => {
      clearTimeout(timer);
      resolve(why);
    };
    child.on('error', (e) => done(`cannot start ${browser}: ${e.message}`));
    child.on('exit', (code) => done(code === 0 ? null : code === 127 ? `${browser} was not found` : `${browser} failed (exit code ${code})`));
  });
}
