/**
 * `gantry ssh-key`, `gantry deploy-key` and `gantry repo clone|clone-url --ssh` against a real daemon (HTTP, in this
 * process), with real keys from ssh-keygen and the real git client: default key files, titles, fingerprints as
 * ssh-keygen prints them, private keys never sent, refused keys with hints, the project from -R or the clone, and
 * clone over HTTP without a key, over SSH with one (through the daemon's SSH server and OpenSSH).
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientEnv, commitFiles, gitOk, tempDir, workTree } from '../helpers/git.js';
import { generateKeyPair } from '../helpers/ssh-keys.js';
import { ROOT_PASSWORD, startCliFixture, type CliFixture } from './helpers.js';

let f: CliFixture;
let rootToken: string;
const P = 'root/keys-cli';

/** git's environment for the CLI's own git calls (no global config, never a prompt). */
const gitEnv = (): Record<string, string> =>
  Object.fromEntries(Object.entries(clientEnv()).filter(([k, v]) => !k.startsWith('GANTRY_') && v !== undefined)) as Record<string, string>;

/** The API as root. */
async function api(method: string, path: string, body?: unknown) {
  const res = await fetch(`${f.url}/api/v3${path}`, {
    method, headers: { 'private-token': rootToken, ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}
const keyCount = async () => (await api('GET', '/user/keys?per_page=100')).body.length as number;

/** A HOME with the given files under .ssh. */
function home(files: Record<string, string>): string {
  const dir = tempDir('gantry-home-');
  mkdirSync(join(dir, '.ssh'));
  for (const [name, content] of Object.entries(files)) writeFileSync(join(dir, '.ssh', name), content);
  return dir;
}

beforeAll(async () => {
  f = await startCliFixture({ ssh: true });
  const login = await f.cli(['login', '--url', f.url, '--username', 'root', '--password-stdin'], { input: `${ROOT_PASSWORD}\n` });
  expect(login.code, login.stderr).toBe(0);
  const session = await fetch(`${f.url}/api/v3/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ login: 'root', password: ROOT_PASSWORD }) });
  rootToken = (await session.json()).private_token;
  expect((await f.cli(['project', 'create', 'keys-cli'])).code).toBe(0);
});
afterAll(async () => {
  await f?.close();
});

describe('gantry ssh-key', () => {
  it('add without a file takes ~/.ssh/id_ed25519.pub first, titled with its comment; list shows ssh-keygen\'s fingerprint', async () => {
    const ed = generateKeyPair('ed25519', { comment: 'me@laptop' });
    const ecdsa = generateKeyPair('ecdsa');
    const h = home({ 'id_ecdsa.pub': readFileSync(ecdsa.publicPath, 'utf8'), 'id_ed25519.pub': readFileSync(ed.publicPath, 'utf8') });
    const added = await f.cli(['ssh-key', 'add'], { env: { HOME: h } });
    expect(added.code, added.stderr).toBe(0);
    expect(added.stderr).toBe(`Added SSH key "me@laptop" from ${join(h, '.ssh', 'id_ed25519.pub')}.\n`);
    expect(added.stdout).toContain(ed.sha256);

    const list = await f.cli(['ssh-key', 'list']);
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toMatch(/^ID\s+TITLE\s+TYPE\s+FINGERPRINT\s+CREATED$/m);
    expect(list.stdout).toContain('me@laptop');
    expect(list.stdout).toContain(ed.sha256);
    const json = (await f.cli(['ssh-key', 'list', '--json'])).json();
    expect(json).toEqual([{ id: expect.any(Number), title: 'me@laptop', key: ed.publicKey, created_at: expect.any(String) }]);
  });

  it('falls back to id_ecdsa.pub, then id_rsa.pub; a key without a comment is titled user@host', async () => {
    const ecdsa = generateKeyPair('ecdsa');
    const [type, data] = ecdsa.publicKey.split(' ');
    const h = home({ 'id_ecdsa.pub': `${type} ${data}\n`, 'id_rsa.pub': 'unused' });
    const added = await f.cli(['ssh-key', 'add', '--json'], { env: { HOME: h } });
    expect(added.code, added.stderr).toBe(0);
    expect(added.json().title).toMatch(/^.+@.+$/);
    expect(added.json().key).toBe(`${type} ${data}`);
  });

  it('add FILE with --title, and from stdin with -', async () => {
    const pair = generateKeyPair('rsa', { bits: 2048 });
    const r = await f.cli(['ssh-key', 'add', pair.publicPath, '--title', 'work laptop', '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json()).toMatchObject({ title: 'work laptop', key: pair.publicKey });
    const other = generateKeyPair('ed25519', { comment: 'from-stdin' });
    const piped = await f.cli(['ssh-key', 'add', '-'], { input: `${other.publicKey}\n` });
    expect(piped.code, piped.stderr).toBe(0);
    expect(piped.stderr).toContain('"from-stdin" from stdin');
  });

  it('refuses a private key before sending anything, and says which file to give', async () => {
    const pair = generateKeyPair('ed25519');
    const before = await keyCount();
    const r = await f.cli(['ssh-key', 'add', pair.privatePath]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${pair.privatePath} holds a private key: it stays on this machine and is not sent`);
    expect(r.stderr).toContain(`hint: give the public key instead: ${pair.privatePath}.pub`);
    expect(await keyCount()).toBe(before);
  });

  it('no key in ~/.ssh: a usage error that says how to make one', async () => {
    const r = await f.cli(['ssh-key', 'add'], { env: { HOME: home({}) } });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/no public key found in .*\.ssh/);
    expect(r.stderr).toContain('ssh-keygen -t ed25519');
  });

  it('a key the server refuses (short RSA, duplicate) exits 1 with the server\'s reason and a hint', async () => {
    const short = await f.cli(['ssh-key', 'add', generateKeyPair('rsa', { bits: 1024 }).publicPath]);
    expect(short.code).toBe(1);
    expect(short.stderr).toContain('must be at least 2048 bits');
    expect(short.stderr).toContain('hint: use an Ed25519 key');
    const pair = generateKeyPair('ed25519');
    expect((await f.cli(['ssh-key', 'add', pair.publicPath])).code).toBe(0);
    const dup = await f.cli(['ssh-key', 'add', pair.publicPath]);
    expect(dup.code).toBe(1);
    expect(dup.stderr).toContain('has already been taken');
    expect(dup.stderr).toContain('registered already');
  });

  it('remove asks for --yes off a terminal, then removes; an unknown id exits 1', async () => {
    const pair = generateKeyPair('ed25519', { comment: 'doomed' });
    const id = (await f.cli(['ssh-key', 'add', pair.publicPath, '--json'])).json().id;
    const asked = await f.cli(['ssh-key', 'remove', String(id)]);
    expect(asked.code).toBe(2);
    expect(asked.stderr).toContain('add --yes');
    const removed = await f.cli(['ssh-key', 'rm', String(id), '--yes']);
    expect(removed.code, removed.stderr).toBe(0);
    expect(removed.stderr).toBe(`Removed SSH key ${id}.\n`);
    expect((await f.cli(['ssh-key', 'list', '--json'])).json().map((k: { id: number }) => k.id)).not.toContain(id);
    const again = await f.cli(['ssh-key', 'remove', String(id), '-y']);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('404');
  });
});

describe('gantry deploy-key', () => {
  it('add, list, enable on another project and remove, with the project named, from -R and from the clone', async () => {
    const pair = generateKeyPair('ed25519', { comment: 'ci-server' });
    const added = await f.cli(['deploy-key', 'add', P, pair.publicPath, '--json']);
    expect(added.code, added.stderr).toBe(0);
    const key = added.json();
    expect(key).toMatchObject({ title: 'ci-server', key: pair.publicKey });
    expect(added.stderr).toContain(`is enabled on ${P} (read-only)`);

    const list = await f.cli(['deploy-key', 'list', '-R', P]);
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toContain(pair.sha256);

    // inside a clone whose remote is the project, the project is left out
    const clone = await workTree();
    await gitOk(clone, ['remote', 'add', 'origin', `${f.url}/${P}.git`]);
    const inClone = await f.cli(['deploy-key', 'list', '--json'], { cwd: clone, env: gitEnv() });
    expect(inClone.code, inClone.stderr).toBe(0);
    expect(inClone.json().map((k: { id: number }) => k.id)).toEqual([key.id]);

    expect((await f.cli(['project', 'create', 'keys-cli-other'])).code).toBe(0);
    const enabled = await f.cli(['deploy-key', 'enable', 'root/keys-cli-other', String(key.id)]);
    expect(enabled.code, enabled.stderr).toBe(0);
    expect((await api('GET', `/projects/${encodeURIComponent('root/keys-cli-other')}/deploy_keys`)).body.map((k: { id: number }) => k.id)).toEqual([key.id]);

    const removed = await f.cli(['deploy-key', 'remove', P, String(key.id), '--yes']);
    expect(removed.code, removed.stderr).toBe(0);
    expect((await api('GET', `/projects/${encodeURIComponent(P)}/deploy_keys`)).body).toEqual([]);
    // still enabled on the other project
    expect((await api('GET', `/projects/${encodeURIComponent('root/keys-cli-other')}/deploy_keys`)).body).toHaveLength(1);
  });

  it('enable of an unknown key and a private key file are refused', async () => {
    const unknown = await f.cli(['deploy-key', 'enable', P, '999999']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('404 Deploy Key Not Found');
    const pair = generateKeyPair('ed25519');
    const priv = await f.cli(['deploy-key', 'add', P, pair.privatePath]);
    expect(priv.code).toBe(2);
    expect(priv.stderr).toContain('holds a private key');
  });
});

describe('gantry repo clone and clone-url', () => {
  let bob: { token: string };
  beforeAll(async () => {
    const created = await api('POST', '/users', { username: 'clonebob', email: 'clonebob@example.com', name: 'Bob', password: 'password123' });
    const session = await fetch(`${f.url}/api/v3/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ login: 'clonebob', password: 'password123' }) });
    bob = { token: (await session.json()).private_token };
    const project = await api('POST', '/projects', { name: 'cloneme', namespace_id: undefined });
    await api('POST', `/projects/${project.body.id}/members`, { user_id: created.body.id, access_level: 30 });
    const work = await workTree();
    await commitFiles(work, { 'README.md': 'hello\n' }, 'first');
    const u = new URL(`${f.url}/root/cloneme.git`);
    u.username = 'root';
    u.password = ROOT_PASSWORD;
    await gitOk(work, ['push', '-q', u.toString(), 'HEAD:master']);
  });
  const asBob = (args: string[], opts: { cwd?: string; env?: Record<string, string> } = {}) =>
    f.cli(args, { cwd: opts.cwd, env: { ...gitEnv(), GANTRY_URL: f.url, GANTRY_TOKEN: bob.token, ...opts.env } });

  it('clone-url prints the HTTP URL, and ssh_url_to_repo with --ssh', async () => {
    const project = (await api('GET', `/projects/${encodeURIComponent('root/cloneme')}`)).body;
    expect((await asBob(['repo', 'clone-url', 'root/cloneme'])).stdout).toBe(`${project.http_url_to_repo}\n`);
    expect((await asBob(['repo', 'clone-url', 'root/cloneme', '--ssh'])).stdout).toBe(`${project.ssh_url_to_repo}\n`);
  });

  it('without an SSH key, clone goes over HTTP with the token, and leaves no token in the clone', async () => {
    const dir = tempDir('gantry-clone-');
    const r = await asBob(['repo', 'clone', 'root/cloneme', join(dir, 'c')]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('over HTTP');
    expect(readFileSync(join(dir, 'c', 'README.md'), 'utf8')).toBe('hello\n');
    expect(readFileSync(join(dir, 'c', '.git', 'config'), 'utf8')).not.toContain(bob.token);
  });

  it('with an SSH key registered, clone goes over SSH to ssh_url_to_repo; --http forces HTTP; --ssh with --http is a usage error', async () => {
    const pair = generateKeyPair('ed25519');
    expect((await asBob(['ssh-key', 'add', pair.publicPath])).code).toBe(0);
    // an ssh stand-in that records what git asked it and fails, so the test does not depend on an SSH server
    const dir = tempDir('gantry-clone-ssh-');
    const log = join(dir, 'ssh-args');
    const fake = join(dir, 'fake-ssh');
    // (`-G` is git asking which ssh variant this is: answer as OpenSSH does, so git passes the port with -p)
    writeFileSync(fake, `#!/bin/sh\n[ "$1" = "-G" ] && exit 0\necho "$@" > '${log}'\necho "ssh: connect refused (test)" >&2\nexit 255\n`);
    chmodSync(fake, 0o755);
    const project = (await api('GET', `/projects/${encodeURIComponent('root/cloneme')}`)).body;
    const r = await asBob(['repo', 'clone', 'root/cloneme', join(dir, 'c')], { env: { GIT_SSH_COMMAND: fake } });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`over SSH (${project.ssh_url_to_repo})`);
    expect(r.stderr).toContain('--http');
    // git ran ssh against the host of ssh_url_to_repo (ssh://git@host:port/ns/p.git off port 22, git@host:ns/p.git on it)
    const args = readFileSync(log, 'utf8');
    const host = project.ssh_url_to_repo.replace(/^ssh:\/\//, '').split(/[:/]/)[0];
    expect(args).toContain(host);
    const port = /^ssh:\/\/[^/]*:(\d+)\//.exec(project.ssh_url_to_repo)?.[1];
    expect(port, project.ssh_url_to_repo).toBeDefined();
    expect(args).toContain(`-p ${port}`);
    expect(args).toMatch(/git-upload-pack '\/?root\/cloneme\.git'/);

    // the real thing: the daemon's SSH server and the stock OpenSSH client with the key
    const sshCommand = `ssh -i ${pair.privatePath} -o IdentitiesOnly=yes -o BatchMode=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR`;
    const real = await asBob(['repo', 'clone', 'root/cloneme', join(dir, 's')], { env: { GIT_SSH_COMMAND: sshCommand } });
    expect(real.code, real.stderr).toBe(0);
    expect(readFileSync(join(dir, 's', 'README.md'), 'utf8')).toBe('hello\n');
    expect(await gitOk(join(dir, 's'), ['remote', 'get-url', 'origin'])).toBe(project.ssh_url_to_repo);

    const http = await asBob(['repo', 'clone', 'root/cloneme', join(dir, 'h'), '--http']);
    expect(http.code, http.stderr).toBe(0);
    expect(existsSync(join(dir, 'h', 'README.md'))).toBe(true);
    const both = await asBob(['repo', 'clone', 'root/cloneme', '--ssh', '--http']);
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('choose one');
  });
});
