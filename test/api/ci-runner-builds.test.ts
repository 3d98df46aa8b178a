/** Runner API builds: claiming (POST /builds/register), the build payload, PUT /builds/:id, and build tokens for git. */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { onPostgres, startTestServer, type TestServer, type TestUser } from '../helpers/app.js';
import { makeProject } from '../helpers/fixtures.js';
import {
  SHA, buildRow, ci, claim, clearQueue, exec, flags01, insertBuild, insertPipeline, projectRunnersToken, registerRunner,
} from '../helpers/runner-fixtures.js';
import { mkdtempSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resolveGitCredentials } from '../../daemon/git-http/auth.js';
import { git } from '../helpers/git.js';
import { settleBuildWork } from '../../daemon/services/ci/builds.js';

let s: TestServer;
let owner: TestUser;
let project: { id: number; path_with_namespace: string; name: string } & Record<string, unknown>;
let second: { id: number };
let shared: { id: number; token: string };

const sha256 = (t: string) => createHash('sha256').update(t).digest('hex');
const setProject = (id: number, col: string, v: number) => exec(s, `UPDATE projects SET ${col} = ? WHERE id = ?`, [v === 1, id]);

beforeAll(async () => {
  s = await startTestServer();
  owner = await s.user('bowner', { projects_limit: 100 });
  project = (await makeProject(s, owner, 'Build Me')) as typeof project;
  second = await makeProject(s, owner, 'second');
  shared = await registerRunner(s, { description: 'shared runner', tag_list: 'docker,linux' });
});
afterAll(async () => {
  await settleBuildWork(s.ctx);
  await s.close();
});
beforeEach(() => clearQueue(s));

describe('POST /ci/api/v1/builds/register', () => {
  it('hands out the oldest pending build with the full payload (201, exact application/json)', async () => {
    const pipeline = await insertPipeline(s, project.id, { ref: 'master', beforeSha: 'b'.repeat(40), userId: owner.id });
    const build = await insertBuild(s, project.id, pipeline, {
      name: 'rspec', stage: 'test', stageIdx: 1, commands: 'bundle\nrspec', userId: owner.id,
      options: { image: 'ruby:2.3', artifacts: { paths: ['out/'], expire_in: '1 week' }, after_script: ['echo done'] },
      variables: [{ key: 'DB', value: 'postgres', public: true }],
    });
    const later = await insertBuild(s, project.id, pipeline, { name: 'later', stageIdx: 1 });
    const res = await ci(s, 'POST', '/builds/register.json', {
      token: shared.token, info: { name: 'gitlab-ci-multi-runner', version: '1.11.5', revision: 'abc', platform: 'linux', architecture: 'amd64' },
    }, { 'user-agent': 'gitlab-ci-multi-runner 1.11.5 (v1.11.5; go1.19.8; linux/amd64)' });
    expect(res.status).toBe(201);
    expect(res.headers['content-type']).toBe('application/json');
    const b = res.body;
    expect(b).toMatchObject({
      id: build, ref: 'master', tag: false, sha: SHA, status: 'running', name: 'rspec', stage: 'test', project_id: project.id,
      project_name: 'Build Me', commands: 'bundle\nrspec', before_sha: 'b'.repeat(40), allow_git_fetch: true, timeout: 3600,
      options: { image: 'ruby:2.3', artifacts: { paths: ['out/'], expire_in: '1 week' }, after_script: ['echo done'] },
      depends_on_builds: [],
    });
    expect(b.token).toMatch(/^[A-Za-z0-9_-]{20,}$/);
    expect(b.repo_url).toBe(`http://gitlab-ci-token:${b.token}@gantry.test/${project.path_with_namespace}.git`);
    const row = await buildRow(s, build);
    expect(row).toMatchObject({ status: 'running', runner_id: shared.id, token_hash: sha256(b.token) });
    expect((await buildRow(s, later)).status).toBe('pending');
    // runner info and contact were recorded
    const runner = (await s.ctx.data.get(`SELECT * FROM runners WHERE id = ?`, [shared.id])) as Record<string, unknown>;
    expect(runner).toMatchObject({ version: '1.11.5', revision: 'abc' });
    expect(typeof runner.contacted_at).toBe('string');
  });

  it('sends the variables in 8.13 order with CI_BUILD_TOKEN private', async () => {
    const pipeline = await insertPipeline(s, project.id, { ref: 'v1.0', userId: owner.id });
    await exec(s, `UPDATE pipelines SET tag = TRUE WHERE id = ?`, [pipeline]);
    const build = await insertBuild(s, project.id, pipeline, { name: 'deploy', stage: 'deploy', ref: 'v1.0', variables: [{ key: 'A', value: '1', public: true }] });
    await exec(s, `UPDATE commit_statuses SET tag = TRUE WHERE id = ?`, [build]);
    const b = await claim(s, shared.token);
    const keys = b.variables.map((v: { key: string }) => v.key);
    expect(keys).toEqual([
      'CI', 'GITLAB_CI', 'CI_BUILD_ID', 'CI_BUILD_TOKEN', 'CI_BUILD_REF', 'CI_BUILD_BEFORE_SHA', 'CI_BUILD_REF_NAME', 'CI_BUILD_NAME',
      'CI_BUILD_STAGE', 'CI_SERVER_NAME', 'CI_SERVER_VERSION', 'CI_SERVER_REVISION', 'CI_BUILD_TAG', 'CI_PROJECT_ID', 'CI_PROJECT_NAME',
      'CI_PROJECT_PATH', 'CI_PROJECT_NAMESPACE', 'CI_PROJECT_URL', 'CI_PIPELINE_ID', 'CI_RUNNER_ID', 'CI_RUNNER_DESCRIPTION', 'CI_RUNNER_TAGS',
      'A', 'GITLAB_USER_ID', 'GITLAB_USER_EMAIL',
    ]);
    const v = Object.fromEntries(b.variables.map((x: { key: string; value: string; public: boolean }) => [x.key, x]));
    expect(v.CI_BUILD_TOKEN).toEqual({ key: 'CI_BUILD_TOKEN', value: b.token, public: false });
    expect(v.CI_BUILD_ID.value).toBe(String(build));
    expect(v.CI_BUILD_TAG.value).toBe('v1.0');
    expect(v.CI_BUILD_BEFORE_SHA.value).toBe('0'.repeat(40));
    expect(v.CI_PROJECT_PATH.value).toBe(project.path_with_namespace);
    expect(v.CI_PROJECT_URL.value).toBe(`http://gantry.test/${project.path_with_namespace}`);
    expect(v.CI_PIPELINE_ID.value).toBe(String(pipeline));
    expect(v.CI_RUNNER_TAGS.value).toBe('docker, linux');
    expect(v.GITLAB_USER_EMAIL.value).toBe('bowner@example.com');
    expect(b.tag).toBe(true);
    expect(b.before_sha).toBe('0'.repeat(40));
  });

  it('lists earlier-stage latest builds in depends_on_builds with artifacts only when unexpired', async () => {
    const pipeline = await insertPipeline(s, project.id);
    const old = await insertBuild(s, project.id, pipeline, { name: 'compile', stage: 'build', stageIdx: 0, status: 'failed' });
    const compile = await insertBuild(s, project.id, pipeline, { name: 'compile', stage: 'build', stageIdx: 0, status: 'success' });
    const lint = await insertBuild(s, project.id, pipeline, { name: 'lint', stage: 'build', stageIdx: 0, status: 'failed' });
    const expired = await insertBuild(s, project.id, pipeline, { name: 'docs', stage: 'build', stageIdx: 0, status: 'success' });
    const same = await insertBuild(s, project.id, pipeline, { name: 'peer', stage: 'test', stageIdx: 1, status: 'created' });
    await exec(s, `UPDATE commit_statuses SET artifacts_file = 'a.zip', artifacts_size = 12 WHERE id = ?`, [compile]);
    await exec(s, `UPDATE commit_statuses SET artifacts_file = 'd.zip', artifacts_size = 3, artifacts_expire_at = '2000-01-01T00:00:00.000Z' WHERE id = ?`, [expired]);
    const build = await insertBuild(s, project.id, pipeline, { name: 'test', stage: 'test', stageIdx: 1, options: { dependencies: ['compile'] } });
    const b = await claim(s, shared.token);
    expect(b.id).toBe(build);
    expect(b.options.dependencies).toEqual(['compile']);
    const deps = b.depends_on_builds;
    expect(deps.map((d: { id: number }) => d.id)).toEqual([compile, lint, expired]);
    expect(deps.map((d: { id: number }) => d.id)).not.toContain(old);
    expect(deps.map((d: { id: number }) => d.id)).not.toContain(same);
    expect(deps[0]).toEqual({
      id: compile, ref: 'master', tag: false, sha: SHA, status: 'success', name: 'compile', token: b.token, stage: 'build',
      project_id: project.id, project_name: 'Build Me', artifacts_file: { filename: 'a.zip', size: 12 }, artifacts_expire_at: null,
    });
    expect(deps[1].artifacts_file).toBeUndefined();
    expect(deps[2].artifacts_file).toBeUndefined();
  });

  it('answers 204 when there is nothing to do, 403 for a bad or missing token, 404 for a paused runner', async () => {
    const none = await ci(s, 'POST', '/builds/register.json', { token: shared.token });
    expect(none.status).toBe(204);
    expect(none.raw.length).toBe(0);
    const bad = await ci(s, 'POST', '/builds/register.json', { token: 'nope' });
    expect(bad.status).toBe(403);
    expect(bad.body).toEqual({ message: '403 Forbidden' });
    expect((await ci(s, 'POST', '/builds/register', {})).status).toBe(403);
    const paused = await registerRunner(s, {});
    await exec(s, `UPDATE runners SET active = FALSE WHERE id = ?`, [paused.id]);
    const pipeline = await insertPipeline(s, project.id);
    const build = await insertBuild(s, project.id, pipeline);
    const r = await ci(s, 'POST', '/builds/register.json', { token: paused.token });
    expect(r.status).toBe(404);
    expect((await buildRow(s, build)).status).toBe('pending');
  });

  it("matches tags: the build's tags must be a subset of the runner's; untagged builds need run_untagged", async () => {
    const pipeline = await insertPipeline(s, project.id);
    const needsMac = await insertBuild(s, project.id, pipeline, { name: 'mac', tags: ['mac'] });
    const needsDocker = await insertBuild(s, project.id, pipeline, { name: 'docker', tags: ['docker'] });
    const untagged = await insertBuild(s, project.id, pipeline, { name: 'plain' });
    const tagsOnly = await registerRunner(s, { tag_list: 'docker,linux,extra', run_untagged: false });
    const noTags = await registerRunner(s, {});
    expect((await claim(s, tagsOnly.token)).id).toBe(needsDocker);
    expect((await ci(s, 'POST', '/builds/register.json', { token: tagsOnly.token })).status).toBe(204);
    expect((await claim(s, noTags.token)).id).toBe(untagged);
    expect((await ci(s, 'POST', '/builds/register.json', { token: noTags.token })).status).toBe(204);
    expect((await buildRow(s, needsMac)).status).toBe('pending');
  });

  it('gives shared runners only projects with shared runners and builds enabled; specific runners only their projects', async () => {
    const specific = await registerRunner(s, { token: await projectRunnersToken(s, second.id) });
    const p1 = await insertPipeline(s, project.id);
    const p2 = await insertPipeline(s, second.id);
    const inFirst = await insertBuild(s, project.id, p1, { name: 'first' });
    const inSecond = await insertBuild(s, second.id, p2, { name: 'second' });
    // The specific runner skips the older build of a project it does not serve.
    expect((await claim(s, specific.token)).id).toBe(inSecond);
    const inSecond2 = await insertBuild(s, second.id, p2, { name: 'second-2' });
    await setProject(second.id, 'shared_runners_enabled', 0);
    await setProject(project.id, 'builds_enabled', 0);
    expect((await ci(s, 'POST', '/builds/register.json', { token: shared.token })).status).toBe(204);
    await setProject(project.id, 'builds_enabled', 1);
    expect((await claim(s, shared.token)).id).toBe(inFirst);
    await setProject(second.id, 'builds_enabled', 0);
    expect((await ci(s, 'POST', '/builds/register.json', { token: specific.token })).status).toBe(204);
    await setProject(second.id, 'builds_enabled', 1);
    await setProject(second.id, 'shared_runners_enabled', 1);
    expect((await claim(s, specific.token)).id).toBe(inSecond2);
  });

  it('a locked shared runner only takes builds of its own projects', async () => {
    const locked = await registerRunner(s, { locked: true });
    const pipeline = await insertPipeline(s, project.id);
    await insertBuild(s, project.id, pipeline);
    expect((await ci(s, 'POST', '/builds/register.json', { token: locked.token })).status).toBe(204);
  });

  it('never hands out builds that are not pending or already have a runner', async () => {
    const pipeline = await insertPipeline(s, project.id);
    for (const status of ['created', 'running', 'success', 'failed', 'canceled', 'skipped']) await insertBuild(s, project.id, pipeline, { status });
    const taken = await insertBuild(s, project.id, pipeline);
    await exec(s, `UPDATE commit_statuses SET runner_id = ? WHERE id = ?`, [shared.id, taken]);
    await exec(s, `INSERT INTO commit_statuses (type, project_id, pipeline_id, name, status, created_at, updated_at) VALUES ('generic', ?, ?, 'ext', 'pending', '2001-01-01T00:00:00.000Z', '2001-01-01T00:00:00.000Z')`, [project.id, pipeline]);
    expect((await ci(s, 'POST', '/builds/register.json', { token: shared.token })).status).toBe(204);
  });
});

describe('PUT /ci/api/v1/builds/:id', () => {
  it('updates state with the runner token: running is ignored, success finishes, trace replaces the stored one (secrets masked)', async () => {
    const pipeline = await insertPipeline(s, project.id);
    const build = await insertBuild(s, project.id, pipeline);
    const b = await claim(s, shared.token);
    const running = await ci(s, 'PUT', `/builds/${build}.json`, { token: shared.token, state: 'running' });
    expect(running.status).toBe(200);
    expect(running.headers['content-type']).toBe('application/json');
    expect(running.body).toMatchObject({ id: build, status: 'running' });
    expect((await buildRow(s, build)).status).toBe('running');
    const runnersToken = await projectRunnersToken(s, project.id);
    const trace = `line one\ntoken ${b.token} and ${runnersToken}\n`;
    const done = await ci(s, 'PUT', `/builds/${build}.json`, { token: shared.token, state: 'success', trace });
    expect(done.status).toBe(200);
    expect(done.body.status).toBe('success');
    expect(await buildRow(s, build)).toMatchObject({ status: 'success', trace_size: Buffer.byteLength(trace) });
    const stored = await s.api('GET', `/projects/${project.id}/builds/${build}/trace`, owner);
    expect(stored.text).toBe(`line one\ntoken ${'x'.repeat(b.token.length)} and ${'x'.repeat(runnersToken.length)}\n`);
  });

  it('state failed drops the build; the build token works instead of the runner token', async () => {
    const pipeline = await insertPipeline(s, project.id);
    const build = await insertBuild(s, project.id, pipeline);
    const b = await claim(s, shared.token);
    const r = await ci(s, 'PUT', `/builds/${build}`, { state: 'failed' }, { 'build-token': b.token });
    expect(r.status).toBe(200);
    expect((await buildRow(s, build)).status).toBe('failed');
  });

  it('answers 404 once the build is not running (canceled), for another runner, and for unknown ids; 403 for bad tokens', async () => {
    const pipeline = await insertPipeline(s, project.id);
    const build = await insertBuild(s, project.id, pipeline);
    const b = await claim(s, shared.token);
    const other = await registerRunner(s, {});
    expect((await ci(s, 'PUT', `/builds/${build}.json`, { token: other.token, state: 'success' })).status).toBe(404);
    expect((await ci(s, 'PUT', `/builds/${build}.json`, { token: 'bogus', state: 'success' })).status).toBe(403);
    await exec(s, `UPDATE commit_statuses SET status = 'canceled' WHERE id = ?`, [build]);
    const canceled = await ci(s, 'PUT', `/builds/${build}.json`, { token: shared.token, state: 'success' });
    expect(canceled.status).toBe(404);
    expect(canceled.body).toEqual({ message: '404 Not Found' });
    expect((await ci(s, 'PUT', `/builds/${build}`, { state: 'success' }, { 'build-token': b.token })).status).toBe(404);
    expect((await buildRow(s, build)).status).toBe('canceled');
  });

  it('runner verify: PUT /builds/-1 is 404 for a live runner token and 403 for an unknown one', async () => {
    expect((await ci(s, 'PUT', '/builds/-1', { token: shared.token })).status).toBe(404);
    expect((await ci(s, 'PUT', '/builds/-1', { token: 'deleted-runner' })).status).toBe(403);
    expect((await ci(s, 'PUT', '/builds/-1', {})).status).toBe(403);
  });

  it('refuses erased builds with 403', async () => {
    const pipeline = await insertPipeline(s, project.id);
    const build = await insertBuild(s, project.id, pipeline);
    await claim(s, shared.token);
    await exec(s, `UPDATE commit_statuses SET erased_at = '2001-01-01T00:00:00.000Z' WHERE id = ?`, [build]);
    const r = await ci(s, 'PUT', `/builds/${build}.json`, { token: shared.token, state: 'success' });
    expect(r.status).toBe(403);
    expect(r.body).toEqual({ message: '403 Forbidden - Build has been erased!' });
  });
});

// Git over HTTP (git-http/) with build tokens, on either engine.
describe('build tokens for git over HTTP', () => {
  /** The server's port, listening from the first call on. */
  const listening = async () => {
    if (!s.app.server.listening) await s.app.listen({ port: 0, host: '127.0.0.1' });
    return (s.app.server.address() as AddressInfo).port;
  };

  it('gitlab-ci-token:<token> reads only the running build\'s project, and only while it runs', async () => {
    const pipeline = await insertPipeline(s, project.id);
    const build = await insertBuild(s, project.id, pipeline);
    const b = await claim(s, shared.token);
    expect(await resolveGitCredentials(s.ctx, 'gitlab-ci-token', b.token)).toEqual({ user: null, readOnly: true, projectIds: [project.id], ci: true });
    expect(await resolveGitCredentials(s.ctx, 'gitlab-ci-token', 'wrong')).toBeNull();
    expect(await resolveGitCredentials(s.ctx, 'gitlab-ci-token', await projectRunnersToken(s, project.id))).toEqual({ user: null, readOnly: true, projectIds: [project.id], ci: true });
    await ci(s, 'PUT', `/builds/${build}.json`, { token: shared.token, state: 'success' });
    expect(await resolveGitCredentials(s.ctx, 'gitlab-ci-token', b.token)).toBeNull();
  });

  it('a real git client clones with repo_url while the build runs, may not push, and is refused once it finished', async () => {
    const port = await listening();
    const pipeline = await insertPipeline(s, project.id);
    const build = await insertBuild(s, project.id, pipeline);
    const b = await claim(s, shared.token);
    const url = b.repo_url.replace('gantry.test', `127.0.0.1:${port}`);
    const dir = mkdtempSync(join(tmpdir(), 'gantry-ci-clone-'));
    const cloned = await git(dir, ['clone', url, 'w']);
    expect(cloned.code, cloned.stderr).toBe(0);
    const w = join(dir, 'w');
    await git(w, ['commit', '--allow-empty', '-m', 'from ci']);
    const pushed = await git(w, ['push', 'origin', 'HEAD:refs/heads/ci']);
    expect(pushed.code).not.toBe(0);
    expect(pushed.stderr).toMatch(/403|not allowed/i);
    await ci(s, 'PUT', `/builds/${build}.json`, { token: shared.token, state: 'success' });
    const after = await git(dir, ['clone', url, 'again']);
    expect(after.code).not.toBe(0);
    const other = await makeProject(s, owner, 'not-this-one');
    const b2 = (await insertBuild(s, project.id, await insertPipeline(s, project.id)), await claim(s, shared.token));
    const otherUrl = b2.repo_url.replace('gantry.test', `127.0.0.1:${port}`).replace(project.path_with_namespace, other.path_with_namespace);
    expect((await git(dir, ['clone', otherUrl, 'other'])).code).not.toBe(0);
  });

  it('while enabled_git_access_protocol is ssh, the build (and the runners token) still clone over HTTP; anything else is refused with the protocol message', async () => {
    const port = await listening();
    const pipeline = await insertPipeline(s, project.id);
    const build = await insertBuild(s, project.id, pipeline);
    const b = await claim(s, shared.token);
    const url = b.repo_url.replace('gantry.test', `127.0.0.1:${port}`);
    const withPassword = (user: string, password: string) => url.replace(/\/\/[^@]+@/, `//${user}:${encodeURIComponent(password)}@`);
    const dir = mkdtempSync(join(tmpdir(), 'gantry-ci-ssh-only-'));
    const setProtocol = async (value: string | null) =>
      expect((await s.api('PUT', '/application/settings', s.root, { enabled_git_access_protocol: value })).status).toBe(200);
    const refusal = 'remote: Git access over HTTP is not allowed; use SSH';
    await setProtocol('ssh');
    try {
      const cloned = await git(dir, ['clone', url, 'w']);
      expect(cloned.code, cloned.stderr).toBe(0);
      const byRunnersToken = await git(dir, ['clone', withPassword('gitlab-ci-token', await projectRunnersToken(s, project.id)), 'r']);
      expect(byRunnersToken.code, byRunnersToken.stderr).toBe(0);
      const w = join(dir, 'w');
      await git(w, ['commit', '--allow-empty', '-m', 'from ci']);
      const pushed = await git(w, ['push', 'origin', 'HEAD:refs/heads/ci-ssh-only']);
      expect(pushed.code).not.toBe(0);
      expect(pushed.stderr).toContain(refusal);
      for (const [name, from] of [
        ['wrong build token', withPassword('gitlab-ci-token', 'wrong')],
        ['a user\'s private token', withPassword(owner.username, owner.token)],
      ] as const) {
        const r = await git(dir, ['clone', from, `x-${name.replace(/\W/g, '')}`]);
        expect(r.code, name).not.toBe(0);
        expect(r.stderr, name).toContain(refusal);
      }
      // no credentials: the 401 challenge (git would send a URL's credentials now), never the repository
      const anon = await git(dir, ['clone', url.replace(/\/\/[^@]+@/, '//'), 'anon']);
      expect(anon.code).not.toBe(0);
      expect(anon.stderr).toMatch(/could not read Username|Authentication failed/);
    } finally {
      await setProtocol(null);
      await ci(s, 'PUT', `/builds/${build}.json`, { token: shared.token, state: 'success' });
    }
    // once the build is over its token is refused with the protocol message, not let through
    await setProtocol('ssh');
    try {
      const after = await git(dir, ['clone', url, 'after']);
      expect(after.code).not.toBe(0);
      expect(after.stderr).toContain(refusal);
    } finally {
      await setProtocol(null);
    }
  });
});
