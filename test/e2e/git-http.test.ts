/**
 * git over HTTP with the real git client against a listening server: clone, push, auth, access levels, branch
 * protection through the pre-receive hook, push events, big binary pushes, repository lifecycle.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { startTestServer, type TestServer, type TestUser } from '../helpers/app.js';
import { commitFiles, git, gitOk, repoUrl, tempDir } from '../helpers/git.js';
import { Repository } from '../../daemon/git/index.js';
import { protectBranch } from '../../daemon/services/repository/protected-branches.js';
import { repositoryPath } from '../../daemon/services/repository/repositories.js';
import { onPush, type ProcessedPush } from '../../daemon/services/repository/push.js';
import { registerGitCredentialResolver } from '../../daemon/git-http/index.js';

const PASSWORD = 'password123';
let s: TestServer;
let base: string;
let alice: TestUser; // owner
let dave: TestUser; // developer
let mary: TestUser; // master
let rita: TestUser; // reporter
let gus: TestUser; // guest
let olga: TestUser; // signed in, not a member
let project: { id: number; path_with_namespace: string };
const dirs: string[] = [];
const pushes: ProcessedPush[] = [];
let offPush: (() => void) | undefined;

const cred = (u: TestUser, password = PASSWORD) => ({ username: u.username, password });
/** Clone URL with the user's private token as password (fast); urlWithPassword for password sign-in. */
const url = (u: TestUser | null, path = project.path_with_namespace) => repoUrl(base, path, u ? cred(u, u.token) : undefined);
const urlWithPassword = (u: TestUser, path = project.path_with_namespace) => repoUrl(base, path, cred(u));
const dir = () => {
  const d = tempDir();
  dirs.push(d);
  return d;
};
/** Clone into a new directory; returns the directory and the git result. */
async function clone(from: string) {
  const d = dir();
  const r = await git(d, ['clone', from, 'w']);
  return { dir: join(d, 'w'), ...r };
}
async function setProtection(level: number) {
  const r = await s.api('PUT', '/application/settings', s.root, { default_branch_protection: level });
  expect(r.status).toBe(200);
}
async function createProject(owner: TestUser, name: string, visibility: number) {
  const r = await s.api('POST', '/projects', owner, { name, visibility_level: visibility });
  expect(r.status).toBe(201);
  return r.body as { id: number; path_with_namespace: string };
}
const head = (d: string, ref = 'HEAD') => gitOk(d, ['rev-parse', ref]);

beforeAll(async () => {
  s = await startTestServer();
  await s.app.listen({ port: 0, host: '127.0.0.1' });
  const addr = s.app.server.address();
  base = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
  [alice, dave, mary, rita, gus, olga] = await Promise.all(['alice', 'dave', 'mary', 'rita', 'gus', 'olga'].map((n) => s.user(n)));
  project = await createProject(alice, 'Repo', 0);
  for (const [u, level] of [[dave, 30], [mary, 40], [rita, 20], [gus, 10]] as const) {
    const r = await s.api('POST', `/projects/${project.id}/members`, alice, { user_id: u.id, access_level: level });
    expect(r.status).toBe(201);
  }
  offPush = onPush({ afterCommit: (ctx, push) => void (ctx === s.ctx && pushes.push(push)) });
});

afterAll(async () => {
  offPush?.();
  await s?.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('repository lifecycle', () => {
  it('creates a bare repository with the project, HEAD on the default branch', async () => {
    const path = repositoryPath(s.ctx, project.id);
    expect(path).toBe(join(s.ctx.paths.repositories, `${project.id}.git`));
    expect(existsSync(join(path, 'HEAD'))).toBe(true);
    expect(readFileSync(join(path, 'HEAD'), 'utf8').trim()).toBe('ref: refs/heads/master');
  });
});

describe('clone and push', () => {
  let work: string;
  let firstSha: string;

  it('clones the empty repository (username and password)', async () => {
    const c = await clone(urlWithPassword(alice));
    expect(c.code, c.stderr).toBe(0);
    expect(c.stderr).toMatch(/empty repository/);
    work = c.dir;
  });

  it('pushes master and records a push event with GitLab push data', async () => {
    await commitFiles(work, { 'README.md': '# Repo\n' }, 'First commit');
    firstSha = await commitFiles(work, { 'src/main.c': 'int main() { return 0; }\n', 'README.md': '# Repo!\n' }, 'Second commit\n\nbody');
    const r = await git(work, ['push', 'origin', 'master']);
    expect(r.code, r.stderr).toBe(0);
    const repo = new Repository(repositoryPath(s.ctx, project.id));
    expect(await repo.resolveBranch('master')).toBe(firstSha);

    // The event row as stored, and as the events API presents it (on either engine).
    const rows = await s.ctx.data.all<{ author_id: number; data: string }>(`SELECT author_id, data FROM events WHERE project_id = ? AND action = 'pushed' ORDER BY id`, [project.id]);
    expect(rows).toHaveLength(1);
    expect(rows[0]!.author_id).toBe(alice.id);
    const data = JSON.parse(rows[0]!.data);
    const events = await s.api('GET', `/projects/${project.id}/events`, alice);
    expect(events.status).toBe(200);
    expect(events.body.find((e: { action_name: string }) => e.action_name === 'pushed new')).toMatchObject({ author_id: alice.id, data });
    expect(data).toMatchObject({
      object_kind: 'push', before: '0000000000000000000000000000000000000000', after: firstSha, ref: 'refs/heads/master', checkout_sha: firstSha,
      user_id: alice.id, user_name: 'alice', user_email: 'alice@example.com', project_id: project.id, total_commits_count: 2,
      repository: { name: 'Repo', visibility_level: 0, git_http_url: 'http://gantry.test/alice/repo.git', git_ssh_url: 'git@gantry.test:alice/repo.git', homepage: 'http://gantry.test/alice/repo' },
    });
    expect(data.commits.map((c: { message: string }) => c.message)).toEqual(['First commit\n', 'Second commit\n\nbody\n']);
    expect(data.commits[1]).toMatchObject({
      id: firstSha, url: `http://gantry.test/alice/repo/commit/${firstSha}`, author: { name: 'Test User', email: 'test@example.com' },
      added: ['src/main.c'], modified: ['README.md'], removed: [],
    });
    expect(data.commits[1].timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d\d:\d\d$/);
    expect(pushes.at(-1)!.updates.map((u) => u.ref)).toEqual(['refs/heads/master']);
    const p = await s.api('GET', `/projects/${project.id}`, alice);
    expect(Date.parse(p.body.last_activity_at)).toBeGreaterThan(Date.parse(p.body.created_at));
  });

  it('clones the non-empty repository, case-insensitively and without .git', async () => {
    const c = await clone(repoUrl(base, 'ALICE/REPO', cred(alice)));
    expect(c.code, c.stderr).toBe(0);
    expect(readFileSync(join(c.dir, 'src/main.c'), 'utf8')).toBe('int main() { return 0; }\n');
    expect(await head(c.dir)).toBe(firstSha);
    const bare = dir();
    const r = await git(bare, ['ls-remote', url(alice).replace(/\.git$/, '')]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`${firstSha}\trefs/heads/master`);
  });

  it('lets a developer push a new branch and a tag', async () => {
    const c = await clone(url(dave));
    const sha = await commitFiles(c.dir, { 'feature.txt': 'feature\n' }, 'Feature work');
    await gitOk(c.dir, ['tag', '-a', 'v1.0', '-m', 'Version 1.0']);
    const r = await git(c.dir, ['push', 'origin', 'HEAD:refs/heads/feature', 'v1.0']);
    expect(r.code, r.stderr).toBe(0);
    const repo = new Repository(repositoryPath(s.ctx, project.id));
    expect(await repo.resolveBranch('feature')).toBe(sha);
    expect((await repo.findTag('v1.0'))!.targetSha).toBe(sha);
    const last = pushes.at(-1)!;
    expect(last.user.id).toBe(dave.id);
    const byRef = Object.fromEntries(last.updates.map((u) => [u.ref, u.data]));
    expect(byRef['refs/heads/feature']).toMatchObject({ object_kind: 'push', total_commits_count: 1, commits: [{ id: sha, message: 'Feature work\n' }] });
    expect(byRef['refs/tags/v1.0']).toMatchObject({ object_kind: 'tag_push', checkout_sha: sha, message: 'Version 1.0', commits: [{ id: sha }] });
  });

  it('lets a developer delete an unprotected branch', async () => {
    const c = await clone(url(dave));
    const r = await git(c.dir, ['push', 'origin', ':feature']);
    expect(r.code, r.stderr).toBe(0);
    const last = pushes.at(-1)!;
    expect(last.updates[0]!.data).toMatchObject({ ref: 'refs/heads/feature', after: '0000000000000000000000000000000000000000', checkout_sha: null, commits: [], total_commits_count: 0 });
  });

  it('pushes a 20 MB binary file and clones it back identical', async () => {
    const big = await createProject(alice, 'Big', 0);
    const c = await clone(url(alice, big.path_with_namespace));
    const blob = randomBytes(20 * 1024 * 1024);
    await commitFiles(c.dir, { 'big.bin': blob }, 'Big binary');
    const r = await git(c.dir, ['push', 'origin', 'master']);
    expect(r.code, r.stderr).toBe(0);
    const back = await clone(url(alice, big.path_with_namespace));
    expect(back.code, back.stderr).toBe(0);
    const digest = (b: Buffer) => createHash('sha256').update(b).digest('hex');
    expect(digest(readFileSync(join(back.dir, 'big.bin')))).toBe(digest(blob));
  }, 120_000);

  it('decompresses gzip request bodies', async () => {
    const sha = await new Repository(repositoryPath(s.ctx, project.id)).resolveBranch('master');
    const pkt = (t: string) => (t.length + 4).toString(16).padStart(4, '0') + t;
    const body = gzipSync(Buffer.from(`${pkt(`want ${sha}\n`)}0000${pkt('done\n')}`));
    const res = await s.app.inject({
      method: 'POST', url: '/alice/repo.git/git-upload-pack', payload: body,
      headers: {
        'content-type': 'application/x-git-upload-pack-request', 'content-encoding': 'gzip',
        authorization: `Basic ${Buffer.from(`alice:${alice.token}`).toString('base64')}`,
      },
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/x-git-upload-pack-result');
    expect(res.rawPayload.includes(Buffer.from('PACK'))).toBe(true);
  });

  it('answers 400 to a receive-pack body that claims gzip and is not (it was 500; found by the fuzzer)', async () => {
    const before = await new Repository(repositoryPath(s.ctx, project.id)).resolveBranch('master');
    const res = await s.app.inject({
      method: 'POST', url: '/alice/repo.git/git-receive-pack', payload: Buffer.from('0000 this is not gzip'),
      headers: {
        'content-type': 'application/x-git-receive-pack-request', 'content-encoding': 'gzip',
        authorization: `Basic ${Buffer.from(`alice:${alice.token}`).toString('base64')}`,
      },
    });
    expect(res.statusCode).toBe(400);
    expect(res.body).toMatch(/not valid gzip/);
    expect(await new Repository(repositoryPath(s.ctx, project.id)).resolveBranch('master')).toBe(before);
  });

  it('answers 415 to upload-pack and receive-pack bodies of another content type (were 500; found by the fuzzer)', async () => {
    const authorization = `Basic ${Buffer.from(`alice:${alice.token}`).toString('base64')}`;
    for (const service of ['git-upload-pack', 'git-receive-pack']) {
      for (const [type, payload] of [['application/json', '{"want":1}'], ['text/plain', '0000'], ['application/x-www-form-urlencoded', 'a=1']]) {
        const res = await s.app.inject({ method: 'POST', url: `/alice/repo.git/${service}`, payload, headers: { 'content-type': type, authorization } });
        expect(res.statusCode, `${service} ${type}`).toBe(415);
        expect(res.body).toBe(`Send the body as application/x-${service}-request, as git does.\n`);
      }
    }
  });
});

describe('info/refs', () => {
  it('advertises with the service header and content type', async () => {
    const auth = `Basic ${Buffer.from(`x:${alice.token}`).toString('base64')}`;
    for (const service of ['git-upload-pack', 'git-receive-pack']) {
      const res = await s.app.inject({ method: 'GET', url: `/alice/repo.git/info/refs?service=${service}`, headers: { authorization: auth } });
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toBe(`application/x-${service}-advertisement`);
      expect(res.headers['cache-control']).toMatch(/no-cache/);
      expect(res.body.startsWith(`001${service === 'git-upload-pack' ? 'e' : 'f'}# service=${service}\n0000`)).toBe(true);
      expect(res.body).toContain('refs/heads/master');
    }
  });

  it('refuses the dumb protocol and answers 401 with a Basic challenge without credentials', async () => {
    const dumb = await s.app.inject({ method: 'GET', url: '/alice/repo.git/info/refs' });
    expect(dumb.statusCode).toBe(403);
    const anon = await s.app.inject({ method: 'GET', url: '/alice/repo.git/info/refs?service=git-upload-pack' });
    expect(anon.statusCode).toBe(401);
    expect(anon.headers['www-authenticate']).toBe('Basic realm="Gantry"');
    const missing = await s.app.inject({ method: 'GET', url: '/alice/nope.git/info/refs?service=git-upload-pack' });
    expect(missing.statusCode).toBe(401);
  });
});

describe('authentication and access', () => {
  it('refuses git over HTTP with a message git prints while enabled_git_access_protocol is ssh, and serves it again when cleared', async () => {
    const setProtocol = async (value: string | null) =>
      expect((await s.api('PUT', '/application/settings', s.root, { enabled_git_access_protocol: value })).status).toBe(200);
    await setProtocol('ssh');
    try {
      const c = await clone(url(alice));
      expect(c.code).not.toBe(0);
      expect(c.stderr).toContain('remote: Git access over HTTP is not allowed; use SSH');
      // without credentials git is asked for them first (a runner's URL carries its build token, sent only after a
      // 401); the challenge's body says why
      const anon = await clone(url(null));
      expect(anon.code).not.toBe(0);
      expect(anon.stderr).toMatch(/could not read Username|Authentication failed/);
      const challenge = await s.app.inject({ method: 'GET', url: `/${project.path_with_namespace}.git/info/refs?service=git-upload-pack` });
      expect(challenge.statusCode).toBe(401);
      expect(challenge.headers['www-authenticate']).toBe('Basic realm="Gantry"');
      expect(challenge.body).toContain('Git access over HTTP is not allowed; use SSH');
      const push = await s.app.inject({ method: 'GET', url: `/${project.path_with_namespace}.git/info/refs?service=git-receive-pack` });
      expect(push.statusCode).toBe(403);
      await setProtocol('http');
      const allowed = await clone(url(alice));
      expect(allowed.code, allowed.stderr).toBe(0);
    } finally {
      await setProtocol(null);
    }
    const c = await clone(url(alice));
    expect(c.code, c.stderr).toBe(0);
  });

  it('fails an anonymous clone of a private project with a credential prompt', async () => {
    const c = await clone(url(null));
    expect(c.code).not.toBe(0);
    expect(c.stderr).toMatch(/could not read Username|Authentication failed/);
  });

  it('fails a wrong password', async () => {
    const c = await clone(urlWithPassword(alice).replace(`:${PASSWORD}@`, ':wrong-password@'));
    expect(c.code).not.toBe(0);
    expect(c.stderr).toMatch(/Authentication failed/);
  });

  it('accepts a private token or a personal access token as password with any username', async () => {
    const c1 = await clone(repoUrl(base, project.path_with_namespace, { username: 'anything', password: dave.token }));
    expect(c1.code, c1.stderr).toBe(0);
    const pat = await s.api('POST', '/user/personal_access_tokens', dave, { name: 'git' });
    expect(pat.status).toBe(201);
    const c2 = await clone(repoUrl(base, project.path_with_namespace, { username: 'dave', password: pat.body.token }));
    expect(c2.code, c2.stderr).toBe(0);
  });

  it('lets a reporter clone but not push (403)', async () => {
    const c = await clone(urlWithPassword(rita));
    expect(c.code, c.stderr).toBe(0);
    await commitFiles(c.dir, { 'r.txt': 'r\n' }, 'reporter');
    const r = await git(c.dir, ['push', 'origin', 'HEAD:refs/heads/reporter']);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/403/);
    const res = await s.app.inject({
      method: 'GET', url: '/alice/repo.git/info/refs?service=git-receive-pack',
      headers: { authorization: `Basic ${Buffer.from(`rita:${PASSWORD}`).toString('base64')}` },
    });
    expect(res.statusCode).toBe(403);
    expect(res.body).toBe('You are not allowed to push code to this project.\n');
  });

  it('refuses a guest (403) and hides the project from a non-member (404)', async () => {
    const g = await clone(url(gus));
    expect(g.code).not.toBe(0);
    expect(g.stderr).toMatch(/403/);
    const o = await clone(url(olga));
    expect(o.code).not.toBe(0);
    expect(o.stderr).toMatch(/not found/);
  });

  it('serves public projects anonymously (clone only) and internal ones to any signed-in user', async () => {
    const pub = await createProject(olga, 'Public Thing', 20);
    const internal = await createProject(olga, 'Internal Thing', 10);
    const seed = await clone(url(olga, pub.path_with_namespace));
    await commitFiles(seed.dir, { 'a.txt': 'a\n' }, 'public seed');
    expect((await git(seed.dir, ['push', 'origin', 'master'])).code).toBe(0);

    const anon = await clone(url(null, pub.path_with_namespace));
    expect(anon.code, anon.stderr).toBe(0);
    expect(readFileSync(join(anon.dir, 'a.txt'), 'utf8')).toBe('a\n');
    const anonPush = await git(anon.dir, ['push', 'origin', 'master:other']);
    expect(anonPush.code).not.toBe(0);
    expect(anonPush.stderr).toMatch(/could not read Username|Authentication failed/);
    const strangerPush = await git(anon.dir, ['push', url(alice, pub.path_with_namespace), 'master:other']);
    expect(strangerPush.code).not.toBe(0);
    expect(strangerPush.stderr).toMatch(/403/);

    expect((await clone(url(alice, internal.path_with_namespace))).code).toBe(0);
    const anonInternal = await clone(url(null, internal.path_with_namespace));
    expect(anonInternal.code).not.toBe(0);
  });
});

describe('credential resolvers and archived projects', () => {
  const refs = (path: string, service: string, user: string, password: string) =>
    s.app.inject({
      method: 'GET', url: `/${path}.git/info/refs?service=${service}`,
      headers: { authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}` },
    });

  it('lets a registered resolver grant read-only, project-scoped access (the CI build token seam)', async () => {
    // A username of its own: `gitlab-ci-token` is the CI room's resolver's (services/ci/build-tokens.ts), asked first.
    const unregister = registerGitCredentialResolver((_ctx, username, password) =>
      username === 'seam-token' && password === 'build-secret' ? { user: null, readOnly: true, projectIds: [project.id] } : null,
    );
    try {
      expect((await refs(project.path_with_namespace, 'git-upload-pack', 'seam-token', 'build-secret')).statusCode).toBe(200);
      const push = await refs(project.path_with_namespace, 'git-receive-pack', 'seam-token', 'build-secret');
      expect(push.statusCode).toBe(403);
      const other = await createProject(alice, 'Other', 0);
      expect((await refs(other.path_with_namespace, 'git-upload-pack', 'seam-token', 'build-secret')).statusCode).toBe(404);
      expect((await refs(project.path_with_namespace, 'git-upload-pack', 'seam-token', 'wrong')).statusCode).toBe(401);
    } finally {
      unregister(); // the resolvers are the process's: a later test file in this worker must not meet this one
    }
  });

  it('refuses pushes to an archived project but still serves clones', async () => {
    const p = await createProject(alice, 'Archived', 0);
    // Archived directly (the archive route is the projects room's).
    await s.ctx.data.run('UPDATE projects SET archived = TRUE WHERE id = ?', [p.id]);
    const push = await refs(p.path_with_namespace, 'git-receive-pack', 'alice', alice.token);
    expect(push.statusCode).toBe(403);
    expect((await refs(p.path_with_namespace, 'git-upload-pack', 'alice', alice.token)).statusCode).toBe(200);
  });
});

describe('branch protection', () => {
  const repo = () => new Repository(repositoryPath(s.ctx, project.id));
  /** A fresh clone as `u` with one new commit on master (or `base` for a force push). */
  async function prepare(u: TestUser, opts: { rewrite?: boolean; branch?: string } = {}) {
    const c = await clone(url(u));
    expect(c.code, c.stderr).toBe(0);
    if (opts.branch) await gitOk(c.dir, ['checkout', '-q', '-B', opts.branch, `origin/${opts.branch}`]);
    if (opts.rewrite) await gitOk(c.dir, ['reset', '-q', '--hard', 'HEAD~1']);
    await commitFiles(c.dir, { [`${u.username}-${Date.now()}.txt`]: 'x\n' }, `by ${u.username}`);
    return c.dir;
  }

  it('level 2: developers cannot push to the default branch, masters can; nobody force pushes or deletes', async () => {
    await setProtection(2);
    const before = await repo().resolveBranch('master');
    const d = await prepare(dave);
    const r = await git(d, ['push', 'origin', 'master']);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('You are not allowed to push code to protected branches on this project.');
    expect(r.stderr).toMatch(/\[remote rejected\] master -> master \(pre-receive hook declined\)/);
    expect(await repo().resolveBranch('master')).toBe(before);

    const m = await prepare(mary);
    const ok = await git(m, ['push', 'origin', 'master']);
    expect(ok.code, ok.stderr).toBe(0);
    expect(await repo().resolveBranch('master')).toBe(await head(m));

    const f = await prepare(mary, { rewrite: true });
    const force = await git(f, ['push', '--force', 'origin', 'master']);
    expect(force.code).not.toBe(0);
    expect(force.stderr).toContain('You are not allowed to force push code to a protected branch on this project.');

    const del = await git(f, ['push', 'origin', ':master']);
    expect(del.code).not.toBe(0);
    expect(del.stderr).toContain('You are not allowed to delete protected branches from this project.');
  });

  it('level 1: developers push to the default branch but cannot force push', async () => {
    await setProtection(1);
    const d = await prepare(dave);
    const ok = await git(d, ['push', 'origin', 'master']);
    expect(ok.code, ok.stderr).toBe(0);
    const f = await prepare(dave, { rewrite: true });
    const force = await git(f, ['push', '--force', 'origin', 'master']);
    expect(force.code).not.toBe(0);
    expect(force.stderr).toContain('You are not allowed to force push code to a protected branch on this project.');
  });

  it('level 0: the default branch is not protected', async () => {
    await setProtection(0);
    const f = await prepare(dave, { rewrite: true });
    const force = await git(f, ['push', '--force', 'origin', 'master']);
    expect(force.code, force.stderr).toBe(0);
    await setProtection(2);
  });

  it('explicitly protected branches: masters only, unless developers_can_push; never force push or delete', async () => {
    const m = await prepare(mary);
    expect((await git(m, ['push', 'origin', 'master:release'])).code).toBe(0);
    await protectBranch(s.ctx, project.id, 'release');
    const d = await prepare(dave, { branch: 'release' });
    const refused = await git(d, ['push', 'origin', 'release']);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('You are not allowed to push code to protected branches on this project.');

    await protectBranch(s.ctx, project.id, 'release', { developersCanPush: true });
    const allowed = await git(d, ['push', 'origin', 'release']);
    expect(allowed.code, allowed.stderr).toBe(0);

    const f = await prepare(mary, { branch: 'release', rewrite: true });
    const force = await git(f, ['push', '--force', 'origin', 'release']);
    expect(force.code).not.toBe(0);
    expect(force.stderr).toContain('You are not allowed to force push code to a protected branch on this project.');
    const del = await git(f, ['push', 'origin', ':release']);
    expect(del.code).not.toBe(0);
    expect(del.stderr).toContain('You are not allowed to delete protected branches from this project.');

    // Wildcard rules protect new branches too.
    await protectBranch(s.ctx, project.id, 'stable-*');
    const w = await git(d, ['push', 'origin', 'HEAD:refs/heads/stable-1']);
    expect(w.code).not.toBe(0);
    expect(w.stderr).toContain('You are not allowed to push code to protected branches on this project.');
  });

  it('lets a developer create the default branch of an empty repository even with level 2', async () => {
    const p = await createProject(alice, 'Fresh', 0);
    await s.api('POST', `/projects/${p.id}/members`, alice, { user_id: dave.id, access_level: 30 });
    const c = await clone(url(dave, p.path_with_namespace));
    await commitFiles(c.dir, { 'x.txt': 'x\n' }, 'first');
    const r = await git(c.dir, ['push', 'origin', 'master']);
    expect(r.code, r.stderr).toBe(0);
    await commitFiles(c.dir, { 'y.txt': 'y\n' }, 'second');
    const again = await git(c.dir, ['push', 'origin', 'master']);
    expect(again.code).not.toBe(0);
  });
});

describe('forks and deletion', () => {
  // Forks are the projects room's: on PostgreSQL once it is ported.
  it('copies refs into a fork and removes the repository with the project', async () => {
    const fork = await s.api('POST', `/projects/fork/${project.id}`, mary);
    expect(fork.status).toBe(201);
    const src = new Repository(repositoryPath(s.ctx, project.id));
    const dst = new Repository(repositoryPath(s.ctx, fork.body.id));
    expect(await dst.refsUnder('refs/')).toEqual(await src.refsUnder('refs/'));
    const c = await clone(url(mary, fork.body.path_with_namespace));
    expect(c.code, c.stderr).toBe(0);
    expect(await head(c.dir)).toBe(await src.resolveBranch('master'));

    const del = await s.api('DELETE', `/projects/${fork.body.id}`, mary);
    expect(del.status).toBe(200);
    expect(existsSync(dst.path)).toBe(false);
  }, 60_000);
});
