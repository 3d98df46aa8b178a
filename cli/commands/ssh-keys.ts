/**
 * gantry ssh-key list|add|remove: the signed-in user's SSH keys (for git over SSH). `add` reads a .pub file (default:
 * the first of ~/.ssh/id_ed25519.pub, id_ecdsa.pub, id_rsa.pub) and refuses to send a private key anywhere.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { hostname, homedir, userInfo } from 'node:os';
import { join, resolve } from 'node:path';
import type { Command } from 'commander';
import { ApiError, noteMorePages, type Factory } from '../client.js';
import { readStdin } from '../editor.js';
import { CliError, UsageError } from '../errors.js';
import type { IO } from '../io.js';
import { printJson, printList, renderRecord, shortTime, type Column } from '../output.js';
import { confirm } from '../prompt.js';
import { connectionFlags, listFlags, listOptions, positiveInt } from './common.js';

/** An SSH key as the API sends it (SSHKey). */
export interface SshKey {
  id: number;
  title: string;
  key: string;
  created_at: string;
}

/** The key files `ssh-key add` tries, in order, when no file is named (as `ssh-copy-id` prefers newer kinds). */
export const DEFAULT_KEY_FILES = ['id_ed25519.pub', 'id_ecdsa.pub', 'id_rsa.pub'];

/** OpenSSH's `SHA256:...` fingerprint of a key line (what `ssh-keygen -l` prints), or '' when it is not one. */
export function keyFingerprint(line: string): string {
  const data = line.trim().split(/\s+/)[1] ?? '';
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(data)) return '';
  return `SHA256:${createHash('sha256').update(Buffer.from(data, 'base64')).digest('base64').replace(/=+$/, '')}`;
}

/** The columns of key lists (user keys and deploy keys). */
export const KEY_COLUMNS: Column<SshKey>[] = [
  { header: 'id', value: (k) => k.id },
  { header: 'title', value: (k) => k.title, max: 40 },
  { header: 'type', value: (k) => k.key.split(/\s+/)[0] },
  { header: 'fingerprint', value: (k) => keyFingerprint(k.key) },
  { header: 'created', value: (k) => shortTime(k.created_at) },
];

/** Show one key as key/value lines, or JSON. */
export function printKey(io: IO, k: SshKey, json?: boolean): void {
  if (json) return printJson(io, k);
  io.out(renderRecord([['id', k.id], ['title', k.title], ['type', k.key.split(/\s+/)[0]], ['fingerprint', keyFingerprint(k.key)], ['created', shortTime(k.created_at)]]));
}

/** The key file to read: the one named (`-` is stdin), else the first default in ~/.ssh that exists. */
function keyFile(io: IO, file: string | undefined): string {
  if (file !== undefined) return file === '-' ? '-' : resolve(io.cwd ?? process.cwd(), file);
  const sshDir = join(io.env.HOME || homedir(), '.ssh');
  const found = DEFAULT_KEY_FILES.map((name) => join(sshDir, name)).find((p) => existsSync(p));
  if (!found) {
    throw new UsageError(`no public key found in ${sshDir} (looked for ${DEFAULT_KEY_FILES.join(', ')})`,
      'create one with `ssh-keygen -t ed25519`, or name the file: gantry ssh-key add PATH.pub');
  }
  return found;
}

/**
 * Read a public key line from a file (or stdin for `-`): one line, trimmed. A private key is refused here, so it never
 * leaves the machine; an empty file or several keys are usage errors.
 */
export async function readPublicKey(io: IO, file: string | undefined): Promise<{ path: string; line: string; comment: string }> {
  const path = keyFile(io, file);
  let text: string;
  try {
    text = path === '-' ? await readStdin(io) : readFileSync(path, 'utf8');
  } catch (e) {
    throw new UsageError(`cannot read ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`, 'name a public key file (.pub) that exists');
  }
  if (/PRIVATE KEY-----|^PuTTY-User-Key-File-/m.test(text)) {
    const pub = path !== '-' && !path.endsWith('.pub') ? `${path}.pub` : 'its .pub file';
    throw new UsageError(`${path === '-' ? 'stdin' : path} holds a private key: it stays on this machine and is not sent`, `give the public key instead: ${pub}`);
  }
  const lines = text.split(/\r?\n/).map((l) => l.trim()).filter((l) => l !== '' && !l.startsWith('#'));
  if (lines.length === 0) throw new UsageError(`${path === '-' ? 'stdin' : path} is empty`, 'give a public key file, like ~/.ssh/id_ed25519.pub');
  if (lines.length > 1) throw new UsageError(`${path === '-' ? 'stdin' : path} holds ${lines.length} lines; add one key at a time`, 'give a single .pub file');
  const line = lines[0]!;
  return { path, line, comment: line.split(/\s+/).slice(2).join(' ') };
}

/** The title of a key added without --title: its comment, else user@host (as ssh-keygen writes comments). */
export function defaultTitle(comment: string): string {
  if (comment) return comment.slice(0, 255);
  let user = 'user';
  try {
    user = userInfo().username;
  } catch {
    /* no passwd entry: keep the generic name */
  }
  return `${user}@${hostname()}`;
}

/** A refused key (400) with a hint that says how to get a key the server takes. */
export function keyRefused(e: unknown): unknown {
  if (!(e instanceof ApiError) || e.status !== 400) return e;
  const hint = /already been taken/.test(e.message)
    ? 'this key is registered already (as your key, another user\'s or a deploy key); `gantry ssh-key list` shows yours'
    : 'use an Ed25519 key (`ssh-keygen -t ed25519`), ECDSA, or RSA of at least 2048 bits, and give its .pub file';
  return new CliError(`the server refused the key: ${e.message}`, hint);
}

/** Registers the verbs of the `ssh-key` noun (main.ts creates the noun and imports this module only when it is used). */
export function registerSshKeys(sshKey: Command, factory: Factory): void {
  const { io } = factory;
  const client = (cmd: Command) => factory.client(connectionFlags(cmd));

  listFlags(sshKey.command('list').alias('ls').description('list your SSH keys with their fingerprints'))
    .action(async (o: { json?: boolean; all?: boolean; page?: number; perPage?: number }, cmd: Command) => {
      const page = await client(cmd).list<SshKey>('/user/keys', {}, listOptions(o));
      printList(io, page.items, KEY_COLUMNS, { json: Boolean(o.json), noun: 'SSH keys' });
      noteMorePages(io, page);
    });

  sshKey
    .command('add')
    .description(`add a public key to your account (default: the first of ~/.ssh/${DEFAULT_KEY_FILES.join(', ')})`)
    .argument('[file]', 'public key file (.pub); - reads stdin')
    .option('-t, --title <title>', 'a name for the key (default: its comment, else user@host)')
    .option('--json', 'print the raw API JSON')
    .addHelpText('after', '\nExamples:\n  gantry ssh-key add\n  gantry ssh-key add ~/.ssh/work.pub --title "work laptop"')
    .action(async (file: string | undefined, o: { title?: string; json?: boolean }, cmd: Command) => {
      const { path, line, comment } = await readPublicKey(io, file);
      const title = o.title ?? defaultTitle(comment);
      const key = await client(cmd).post<SshKey>('/user/keys', { title, key: line }).catch((e: unknown) => { throw keyRefused(e); });
      io.err(`Added SSH key "${key.title}" from ${path === '-' ? 'stdin' : path}.\n`);
      printKey(io, key, o.json);
    });

  sshKey
    .command('remove')
    .alias('rm')
    .description('remove one of your SSH keys (git over SSH stops accepting it)')
    .argument('<id>', 'key id (see `gantry ssh-key list`)', positiveInt)
    .option('-y, --yes', 'do not ask for confirmation (required when stdin is not a terminal)')
    .action(async (id: number, o: { yes?: boolean }, cmd: Command) => {
      const api = client(cmd);
      if (!o.yes) {
        if (!io.stdinIsTTY) throw new UsageError('removing needs confirmation', 'add --yes');
        const key = await api.get<SshKey>(`/user/keys/${id}`);
        if (!(await confirm(io, `Remove SSH key ${id} "${key.title}"?`))) throw new CliError('not removed');
      }
      await api.delete(`/user/keys/${id}`);
      io.err(`Removed SSH key ${id}.\n`);
    });
}
