/**
 * Server-side hooks for receive-pack. Git runs `<hooks dir>/pre-receive`, a tiny shell shim written by the daemon
 * into the data dir, which execs `hooks/pre-receive.mjs` with the daemon's own node. Both paths and the per-push
 * decisions travel in environment variables (or a file, for very many refs) set when receive-pack is spawned, so
 * the hook never calls back into the daemon.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync, chmodSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { daemonAsset } from '../assets.js';

/** What the pre-receive hook does with one ref: refuse with a message, or refuse only a force push. {} allows. */
export interface RefRule {
  deny?: string;
  /** When set, a non-fast-forward update is refused with this message. */
  forcePush?: string;
}

/** The hook program (plain .mjs: runs from the sources and from dist/, where the build copies it). */
export const PRE_RECEIVE_SCRIPT = daemonAsset('git/hooks/pre-receive.mjs');

const SHIM = `#!/bin/sh
# Written by gantryd: branch protection for pushes over HTTP. Rewritten on start; do not edit.
if [ -z "$GANTRY_NODE" ] || [ -z "$GANTRY_PRE_RECEIVE" ]; then
  echo "Pushes are only accepted through the Gantry server." >&2
  exit 1
fi
exec "$GANTRY_NODE" "$GANTRY_PRE_RECEIVE"
`;
/** Above this size the rules go through a temporary file (one environment string is limited to 128 KiB). */
const ENV_LIMIT = 64 * 1024;

const ready = new Set<string>();

/** Make sure the hooks directory with the pre-receive shim exists; returns it. */
export function ensureHooksDir(dir: string): string {
  if (ready.has(dir)) return dir;
  if (!existsSync(PRE_RECEIVE_SCRIPT)) throw new Error(`pre-receive hook missing at ${PRE_RECEIVE_SCRIPT}; rebuild gantry`);
  const file = join(dir, 'pre-receive');
  mkdirSync(dir, { recursive: true });
  if (!existsSync(file) || readFileSync(file, 'utf8') !== SHIM) {
    // Whole or not at all (a temporary name, then renamed): another daemon sharing the data dir may be running the
    // shim for a push right now, and a half-written one that does nothing would let that push past the protection.
    const temp = join(dir, `.pre-receive-${randomBytes(6).toString('hex')}`);
    writeFileSync(temp, SHIM, { mode: 0o755 });
    chmodSync(temp, 0o755);
    renameSync(temp, file);
  } else chmodSync(file, 0o755);
  ready.add(dir);
  return dir;
}

/** How receive-pack is started so that its pre-receive hook enforces a push's rules; call cleanup() afterwards. */
export interface ReceivePackSetup {
  config: Record<string, string>;
  env: Record<string, string>;
  cleanup(): Promise<void>;
}

function hookConfig(hooksDir: string): Pick<ReceivePackSetup, 'config' | 'env'> {
  return {
    config: { 'core.hooksPath': ensureHooksDir(hooksDir), 'receive.denyNonFastForwards': 'false', 'receive.denyDeletes': 'false' },
    env: { GANTRY_NODE: process.execPath, GANTRY_PRE_RECEIVE: PRE_RECEIVE_SCRIPT },
  };
}

async function rulesFile(): Promise<{ file: string; cleanup(): Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'gantry-push-'));
  return { file: join(dir, 'rules.json'), cleanup: () => rm(dir, { recursive: true, force: true }) };
}

/** The -c settings and environment receive-pack needs so that the hook enforces `rules`. */
export async function receivePackSetup(hooksDir: string, rules: Record<string, RefRule>): Promise<ReceivePackSetup> {
  const { config, env } = hookConfig(hooksDir);
  const json = JSON.stringify(rules);
  if (json.length <= ENV_LIMIT) return { config, env: { ...env, GANTRY_REF_RULES: json }, cleanup: async () => undefined };
  const { file, cleanup } = await rulesFile();
  await writeFile(file, json);
  return { config, env: { ...env, GANTRY_REF_RULES_FILE: file }, cleanup };
}

/**
 * For a receive-pack started before its push's commands are known (git over SSH, where the ref advertisement comes
 * first): the rules go to a file that decide() writes, which must happen before the commands reach receive-pack.
 * Until then the file does not exist, and a hook that ran anyway would refuse every ref.
 */
export async function deferredReceivePackSetup(hooksDir: string): Promise<ReceivePackSetup & { decide(rules: Record<string, RefRule>): Promise<void> }> {
  const { config, env } = hookConfig(hooksDir);
  const { file, cleanup } = await rulesFile();
  return { config, env: { ...env, GANTRY_REF_RULES_FILE: file }, cleanup, decide: (rules) => writeFile(file, JSON.stringify(rules)) };
}
