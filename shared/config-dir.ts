/** Where Gantry's client programs (the CLI, the runner agent) keep their files, and how they write them privately. */
import { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';

/** The config dir: $GANTRY_CONFIG_DIR, else $XDG_CONFIG_HOME/gantry, else ~/.config/gantry. */
export function configDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.GANTRY_CONFIG_DIR) return env.GANTRY_CONFIG_DIR;
  const base = env.XDG_CONFIG_HOME || join(env.HOME || homedir(), '.config');
  return join(base, 'gantry');
}

/** Read and parse a JSON file; null when it does not exist. Throws a clear error when it is not valid JSON. */
export function readJsonFile<T>(file: string): T | null {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw e;
  }
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new Error(`${file} is not valid JSON; fix or remove it`);
  }
}

/**
 * Write a JSON file readable only by its owner (file 0600, directory 0700). The data is written to a temporary
 * file first and renamed over the target, so a crash never leaves a half-written config with tokens in it.
 */
export function writePrivateJsonFile(file: string, data: unknown): void {
  const dir = dirname(file);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(data, null, 2)}\n`, { mode: 0o600 });
  chmodSync(tmp, 0o600);
  renameSync(tmp, file);
}
