/**
 * The SSH cells of the authorization matrix: the built-in SSH server started in-process on a free port, one key per
 * caller added through /user/keys (the anonymous caller holds a key nobody added, the blocked user's key was added
 * before the block), and the stock OpenSSH client running `git-upload-pack` / `git-receive-pack` on each project.
 * A refusal is read from what the client gets (8.x GitAccess's messages): authentication refused 401, "could not be
 * found" 404, "not allowed" 403. A permitted push creates its ref; a refused one must not.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { startSshServer, type SshServer } from '../../daemon/ssh/server.js';
import { generateKeyPair, type TestKeyPair } from '../helpers/ssh-keys.js';
import { receivePackRequest } from './requests.js';
import { asRoot, callerUser, CALLERS, type Caller, type World } from './world.js';

/** Who holds an SSH key in the SSH cells: the callers, plus a deploy key of the project (read only, 8.x CE). */
export type SshCaller = Caller | 'deployKey';

/** The SSH server and the callers' keys. */
export interface SshSetup {
  server: SshServer;
  keys: Record<Caller, TestKeyPair>;
  /** The deploy key, enabled on every project of the world. */
  deployKey: TestKeyPair;
  /** What the server logged at warn level (shown when a cell fails). */
  warnings: string[];
}

/** Start the SSH server on the world's context (its config must name a port: `sshPort: '0'`) and give out keys. */
export async function startSsh(w: World): Promise<SshSetup> {
  const warnings: string[] = [];
  const server = await startSshServer(w.s.ctx, (level, message, err) => {
    if (level === 'warn') warnings.push(`${message}${err ? `: ${String(err)}` : ''}`);
  });
  if (!server) throw new Error('the SSH server did not start');
  const keys = {} as Record<Caller, TestKeyPair>;
  for (const caller of CALLERS) {
    keys[caller] = generateKeyPair('ed25519', { comment: `mx-${caller}` });
    const user = callerUser(w, caller);
    if (!user) continue; // anonymous: a key no account holds
    if (caller === 'blocked') {
      // blocked users cannot add keys: add it while unblocked, block again
      await asRoot(w, 'PUT', `/users/${user.id}/unblock`);
      await w.s.api('POST', '/user/keys', user, { title: 'mx', key: keys[caller].publicKey });
      await asRoot(w, 'PUT', `/users/${user.id}/block`);
    } else {
      const r = await w.s.api('POST', '/user/keys', user, { title: 'mx', key: keys[caller].publicKey });
      if (r.status !== 201) throw new Error(`key of ${caller}: ${r.status} ${r.text}`);
    }
  }
  const deployKey = generateKeyPair('ed25519', { comment: 'mx-deploy' });
  const dk = await asRoot(w, 'POST', `/projects/${w.projects[0].id}/deploy_keys`, { title: 'mx deploy', key: deployKey.publicKey });
  for (const vis of [10, 20] as const) await asRoot(w, 'POST', `/projects/${w.projects[vis].id}/deploy_keys/${dk.id}/enable`);
  return { server, keys, deployKey, warnings };
}

/** What the client got: a status in HTTP terms (200 for a served command). */
export interface SshAnswer { status: number; detail: string }

/** Run `<service> '<path>.git'` over SSH with `key`, writing `input`; returns the answer in HTTP terms. */
export function sshGit(setup: SshSetup, key: TestKeyPair, service: 'git-upload-pack' | 'git-receive-pack', path: string, input: Buffer): Promise<SshAnswer> {
  return new Promise((resolve) => {
    const args = [
      '-i', key.privatePath, '-p', String(setup.server.port), '-o', 'StrictHostKeyChecking=no', '-o', 'UserKnownHostsFile=/dev/null',
      '-o', 'IdentitiesOnly=yes', '-o', 'BatchMode=yes', '-o', 'LogLevel=ERROR', '-T', `git@${setup.server.host}`, `${service} '${path}.git'`,
    ];
    const p = spawn('ssh', args, { stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let sent = false;
    p.stdout.on('data', (d: Buffer) => {
      stdout += d.toString('latin1');
      // as git does: the request goes after the ref advertisement (its closing flush), and our side stays open
      // until a push's report-status came back
      if (!sent && stdout.endsWith('0000')) {
        sent = true;
        p.stdin.write(input);
        if (service === 'git-upload-pack') p.stdin.end();
      } else if (sent && service === 'git-receive-pack' && /unpack [^\n]*\n[\s\S]*0000$/.test(stdout.slice(stdout.indexOf('unpack')))) {
        p.stdin.end();
      }
    });
    p.stderr.on('data', (d: Buffer) => { stderr += d.toString(); });
    p.stdin.on('error', () => undefined);
    p.on('close', (code) => {
      const detail = `exit ${code}: ${stderr.trim().slice(0, 120)}`;
      if (/Permission denied \(publickey\)/.test(stderr)) return resolve({ status: 401, detail });
      if (/could not be found/.test(stderr)) return resolve({ status: 404, detail });
      if (/not allowed/.test(stderr)) return resolve({ status: 403, detail });
      // served: the ref advertisement came back (git's first pkt-line names a sha)
      if (/^[0-9a-f]{4}[0-9a-f]{40} /.test(stdout)) return resolve({ status: 200, detail });
      resolve({ status: 500, detail: `${detail} ${stdout.slice(0, 80)}` });
    });
    // a refused command gets no advertisement: the server writes why and closes the channel (`close` above)
  });
}

/** The request bodies of the two commands: upload-pack gets a flush (no wants: it ends); receive-pack creates `ref`. */
export function sshInput(service: 'git-upload-pack' | 'git-receive-pack', sha: string, ref: string): Buffer {
  return service === 'git-upload-pack' ? Buffer.from('0000') : Buffer.from(receivePackRequest(sha, ref).payload);
}

/** Whether a ref exists in a project's repository. */
export const refExists = (w: World, projectId: number, ref: string) => existsSync(`${w.s.ctx.paths.repositories}/${projectId}.git/${ref}`);
