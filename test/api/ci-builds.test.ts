// Builds consumer API: lists and scopes, one build, artifacts, trace, cancel/retry/erase/keep/play and the authorization matrix.
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer, type TestUser } from '../helpers/app.js';
import { addCastMembers, makeCast, makeProject, type Cast } from '../helpers/fixtures.js';
import { buildNamed, drive, pipelinesOf, pushFiles, statusByName } from '../helpers/ci.js';
import { artifactExpiryWorker, changeBuildStatus, findBuild, settleBuildWork } from '../../daemon/services/ci/builds.js';
import { artifactsFilePath, storeArtifacts } from '../../daemon/services/ci/artifacts.js';
import { replaceTrace } from '../../daemon/services/ci/traces.js';
import { now } from '../../daemon/context.js';
import { exec } from '../helpers/runner-fixtures.js';

let s: TestServer;
let cast: Cast;
let pid: number;
let pipelineId: number;
let sha: string;

const YML = `
stages: [build, test, deploy]
compile:
  stage: build
  script: make
rspec:
  stage: test
  script: rspec
spinach:
  stage: test
  script: spinach
ship:
  stage: deploy
  script: ship
release:
  stage: deploy
  script: release
  when: manual
`;

const BUILD_KEYS = ['commit', 'coverage', 'created_at', 'finished_at', 'id', 'name', 'pipeline', 'ref', 'runner', 'stage', 'started_at', 'status', 'tag', 'user'];

async function insertRunner(): Promise<number> {
  const t = now();
  const r = await s.ctx.data.get<{ id: number }>(
    `INSERT INTO runners (token_hash, description, name, is_shared, created_at, updated_at) VALUES (?, 'my runner', 'gitlab-ci-multi-runner', TRUE, ?, ?) RETURNING id`,
    [`hash-${Math.random()}`, t, t]);
  return r!.id;
}

async function artifacts(buildId: number, content = 'PK-zip-bytes', expireIn?: string) {
  const b = (await findBuild(s.ctx, buildId))!;
  await storeArtifacts(s.ctx, b, Readable.from([Buffer.from(content)]), 'artifacts.zip', expireIn);
}

beforeAll(async () => {
  s = await startTestServer();
  cast = await makeCast(s, 'bl');
  pid = (await makeProject(s, cast.owner, 'builds-main')).id;
  await addCastMembers(s.ctx, cast, pid);
  sha = await pushFiles(s.ctx, pid, cast.owner.id, { '.gitlab-ci.yml': YML }, { message: 'Add CI\n\nbody text' });
  pipelineId = (await pipelinesOf(s.ctx, pid))[0]!.id;
  const runner = await insertRunner();
  await changeBuildStatus(s.ctx, (await buildNamed(s.ctx, pipelineId, 'compile')).id, 'run', { runnerId: runner });
  await changeBuildStatus(s.ctx, (await buildNamed(s.ctx, pipelineId, 'compile')).id, 'success');
  await settleBuildWork(s.ctx);
  // rspec fails, spinach succeeds -> ship and release skipped
  await drive(s.ctx, pipelineId, 'rspec', 'run', 'drop');
  await drive(s.ctx, pipelineId, 'spinach', 'run', 'success');
});
afterAll(async () => s.close());

describe('GET /projects/:id/builds', () => {
  it('lists every build newest first with the Build entity', async () => {
    const r = await s.api('GET', `/projects/${pid}/builds`, cast.reporter);
    expect(r.status).toBe(200);
    expect(r.headers['x-total']).toBe('5');
    expect(r.body.map((b: { name: string }) => b.name)).toEqual(['release', 'ship', 'spinach', 'rspec', 'compile']);
    const compile = r.body[4];
    expect(Object.keys(compile).sort()).toEqual(BUILD_KEYS);
    expect(compile).toMatchObject({
      name: 'compile', stage: 'build', status: 'success', ref: 'master', tag: false, coverage: null,
      commit: { id: sha, short_id: sha.slice(0, 8), title: 'Add CI', message: 'Add CI\n\nbody text\n', author_name: 'Ci Tester', author_email: 'ci@example.com' },
      runner: { description: 'my runner', active: true, is_shared: true, name: 'gitlab-ci-multi-runner' },
      pipeline: { id: pipelineId, sha, ref: 'master', status: 'failed' },
      user: { id: cast.owner.id, username: cast.owner.username, is_admin: false },
    });
    expect(typeof compile.commit.created_at).toBe('string');
    expect(typeof compile.started_at).toBe('string');
    expect(typeof compile.finished_at).toBe('string');
    expect(r.body[0].runner).toBeNull();
    expect(r.body[0].started_at).toBeNull();
  });

  it('paginates', async () => {
    const r = await s.api('GET', `/projects/${pid}/builds?per_page=2&page=3`, cast.reporter);
    expect(r.body.map((b: { name: string }) => b.name)).toEqual(['compile']);
    expect(r.headers).toMatchObject({ 'x-total': '5', 'x-total-pages': '3', 'x-page': '3', 'x-per-page': '2', 'x-next-page': '', 'x-prev-page': '2' });
    expect(r.headers.link).toContain('rel="prev"');
  });

  it('filters by scope: a string, scope[]= and scope[0]=; empty means all; unknown values are 400', async () => {
    const names = async (q: string) => (await s.api('GET', `/projects/${pid}/builds?${q}`, cast.reporter)).body.map((b: { name: string }) => b.name);
    expect(await names('scope=failed')).toEqual(['rspec']);
    expect(await names('scope[]=failed&scope[]=skipped')).toEqual(['release', 'ship', 'rspec']);
    expect(await names('scope[0]=success&scope[1]=failed')).toEqual(['spinach', 'rspec', 'compile']);
    expect((await names('scope=')).length).toBe(5);
    for (const q of ['scope=bogus', 'scope[]=success&scope[]=nope', 'scope[0]=x', 'scope[a]=zzz']) {
      const r = await s.api('GET', `/projects/${pid}/builds?${q}`, cast.reporter);
      expect(r.status).toBe(400);
      expect(r.body).toEqual({ message: 'Scope contains invalid value(s)' });
    }
  });
});

describe('GET /projects/:id/repository/commits/:sha/builds', () => {
  it('lists the builds of the commit; [] without pipelines; 404 for an unknown sha', async () => {
    const r = await s.api('GET', `/projects/${pid}/repository/commits/${sha}/builds?scope=success`, cast.reporter);
    expect(r.status).toBe(200);
    expect(r.body.map((b: { name: string }) => b.name)).toEqual(['spinach', 'compile']);
    const byBranch = await s.api('GET', `/projects/${pid}/repository/commits/master/builds`, cast.reporter);
    expect(byBranch.body.length).toBe(5);
    const other = await pushFiles(s.ctx, pid, cast.owner.id, { 'x.txt': 'x' }, { message: 'no ci [ci skip]' });
    const empty = await s.api('GET', `/projects/${pid}/repository/commits/${other}/builds`, cast.reporter);
    expect(empty.status).toBe(200);
    expect(empty.body).toEqual([]);
    const unknown = await s.api('GET', `/projects/${pid}/repository/commits/${'a'.repeat(40)}/builds`, cast.reporter);
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ message: '404 Not Found' });
    expect((await s.api('GET', `/projects/${pid}/repository/commits/${sha}/builds?scope=wrong`, cast.reporter)).status).toBe(400);
  });
});

describe('one build, artifacts and trace', () => {
  it('GET one build; 404 for unknown ids and for builds of other projects', async () => {
    const id = (await buildNamed(s.ctx, pipelineId, 'rspec')).id;
    const r = await s.api('GET', `/projects/${pid}/builds/${id}`, cast.reporter);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ id, name: 'rspec', status: 'failed', stage: 'test' });
    expect((await s.api('GET', `/projects/${pid}/builds/999999`, cast.reporter)).body).toEqual({ message: '404 Not Found' });
    const other = (await makeProject(s, cast.owner, 'builds-other')).id;
    expect((await s.api('GET', `/projects/${other}/builds/${id}`, cast.owner)).status).toBe(404);
  });

  it('artifacts: 404 when none, the file when stored, artifacts_file in the entity', async () => {
    const id = (await buildNamed(s.ctx, pipelineId, 'compile')).id;
    expect((await s.api('GET', `/projects/${pid}/builds/${id}/artifacts`, cast.reporter)).status).toBe(404);
    await artifacts(id, 'zip-content-1');
    const r = await s.api('GET', `/projects/${pid}/builds/${id}/artifacts`, cast.reporter);
    expect(r.status).toBe(200);
    expect(r.text).toBe('zip-content-1');
    expect(r.headers['content-disposition']).toBe('attachment; filename="artifacts.zip"');
    const b = await s.api('GET', `/projects/${pid}/builds/${id}`, cast.reporter);
    expect(b.body.artifacts_file).toEqual({ filename: 'artifacts.zip', size: 13 });
  });

  it('artifacts by ref and job: the newest successful build of the job on the ref', async () => {
    const path = `/projects/${pid}/builds/artifacts/master/download`;
    const r = await s.api('GET', `${path}?job=compile`, cast.reporter);
    expect(r.status).toBe(200);
    expect(r.text).toBe('zip-content-1');
    expect((await s.api('GET', `${path}?job=rspec`, cast.reporter)).status).toBe(404);
    expect((await s.api('GET', `/projects/${pid}/builds/artifacts/nobranch/download?job=compile`, cast.reporter)).status).toBe(404);
    // a ref with a slash, URL-encoded
    await pushFiles(s.ctx, pid, cast.owner.id, { 'slash.txt': 's' }, { branch: 'feature/x', from: 'master' });
    const slashPipe = (await pipelinesOf(s.ctx, pid)).at(-1)!;
    expect(slashPipe.ref).toBe('feature/x');
    await drive(s.ctx, slashPipe.id, 'compile', 'run', 'success');
    await artifacts((await buildNamed(s.ctx, slashPipe.id, 'compile')).id, 'slash-zip');
    const slash = await s.api('GET', `/projects/${pid}/builds/artifacts/feature%2Fx/download?job=compile`, cast.reporter);
    expect(slash.status).toBe(200);
    expect(slash.text).toBe('slash-zip');
    const missing = await s.api('GET', path, cast.reporter);
    expect(missing.status).toBe(400);
    expect(missing.body).toEqual({ message: '400 (Bad request) "job" not given' });
  });

  it('trace: 404 when none, text/plain when present', async () => {
    const b = await buildNamed(s.ctx, pipelineId, 'spinach');
    expect((await s.api('GET', `/projects/${pid}/builds/${b.id}/trace`, cast.reporter)).status).toBe(404);
    await replaceTrace(s.ctx, b, 'line 1\nline 2\n');
    const r = await s.api('GET', `/projects/${pid}/builds/${b.id}/trace`, cast.reporter);
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toMatch(/^text\/plain/);
    expect(r.text).toBe('line 1\nline 2\n');
  });
});

describe('build actions', () => {
  it('retry: 201 with a new pending build; later skipped builds back to created; 403 when not retryable', async () => {
    const rspec = await buildNamed(s.ctx, pipelineId, 'rspec');
    const r = await s.api('POST', `/projects/${pid}/builds/${rspec.id}/retry`, cast.developer);
    expect(r.status).toBe(201);
    expect(r.body.id).not.toBe(rspec.id);
    expect(r.body).toMatchObject({ name: 'rspec', status: 'pending', started_at: null, finished_at: null, user: { id: cast.developer.id } });
    expect(await statusByName(s.ctx, pipelineId)).toMatchObject({ rspec: 'pending', ship: 'created', release: 'created' });
    expect((await pipelinesOf(s.ctx, pid))[0]!.status).toBe('running');
    const again = await s.api('POST', `/projects/${pid}/builds/${r.body.id}/retry`, cast.developer);
    expect(again.status).toBe(403);
    expect(again.body).toEqual({ message: '403 Forbidden - Build is not retryable' });
    // the old build is still listed
    expect((await s.api('GET', `/projects/${pid}/builds/${rspec.id}`, cast.reporter)).body.status).toBe('failed');
    await drive(s.ctx, pipelineId, 'rspec', 'run', 'success');
    expect(await statusByName(s.ctx, pipelineId)).toMatchObject({ ship: 'pending', release: 'skipped' });
  });

  it('play: a skipped manual build goes pending (200); anything else 400', async () => {
    const release = await buildNamed(s.ctx, pipelineId, 'release');
    const ship = await buildNamed(s.ctx, pipelineId, 'ship');
    const bad = await s.api('POST', `/projects/${pid}/builds/${ship.id}/play`, cast.developer);
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({ message: '400 (Bad request) "Unplayable Build" not given' });
    const r = await s.api('POST', `/projects/${pid}/builds/${release.id}/play`, cast.developer);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ id: release.id, status: 'pending', user: { id: cast.developer.id } });
    expect((await s.api('POST', `/projects/${pid}/builds/${release.id}/play`, cast.developer)).status).toBe(400);
  });

  it('cancel: 201; pending/running become canceled with finished_at; finished builds are returned unchanged', async () => {
    const release = await buildNamed(s.ctx, pipelineId, 'release');
    const r = await s.api('POST', `/projects/${pid}/builds/${release.id}/cancel`, cast.developer);
    expect(r.status).toBe(201);
    expect(r.body.status).toBe('canceled');
    expect(typeof r.body.finished_at).toBe('string');
    const compile = await buildNamed(s.ctx, pipelineId, 'compile');
    const same = await s.api('POST', `/projects/${pid}/builds/${compile.id}/cancel`, cast.developer);
    expect(same.status).toBe(201);
    expect(same.body.status).toBe('success');
  });

  it('keep: 200 clears the expiry and answers download_url; 404 without artifacts', async () => {
    const spinach = await buildNamed(s.ctx, pipelineId, 'spinach');
    expect((await s.api('POST', `/projects/${pid}/builds/${spinach.id}/artifacts/keep`, cast.developer)).status).toBe(404);
    await artifacts(spinach.id, 'spinach-zip', '1 week');
    expect((await findBuild(s.ctx, spinach.id))!.artifactsExpireAt).toBeTruthy();
    const r = await s.api('POST', `/projects/${pid}/builds/${spinach.id}/artifacts/keep`, cast.developer);
    expect(r.status).toBe(200);
    expect(r.body.artifacts_file).toBeUndefined();
    expect(r.body.download_url).toMatch(new RegExp(`/builds/${spinach.id}/artifacts/download$`));
    expect((await findBuild(s.ctx, spinach.id))!.artifactsExpireAt).toBeNull();
  });

  it('erase: 201 removes artifacts and trace (download_url null); 403 when not erasable', async () => {
    const spinach = await buildNamed(s.ctx, pipelineId, 'spinach');
    const r = await s.api('POST', `/projects/${pid}/builds/${spinach.id}/erase`, cast.developer);
    expect(r.status).toBe(201);
    expect(r.body.status).toBe('success');
    expect(r.body.download_url).toBeNull();
    expect(r.body.artifacts_file).toBeUndefined();
    expect((await findBuild(s.ctx, spinach.id))!.erasedAt).toBeTruthy();
    expect((await findBuild(s.ctx, spinach.id))!.erasedById).toBe(cast.developer.id);
    expect(await artifactsFilePath(s.ctx, (await findBuild(s.ctx, spinach.id))!)).toBeNull();
    expect((await s.api('GET', `/projects/${pid}/builds/${spinach.id}/trace`, cast.reporter)).status).toBe(404);
    expect((await s.api('GET', `/projects/${pid}/builds/${spinach.id}/artifacts`, cast.reporter)).status).toBe(404);
    const again = await s.api('POST', `/projects/${pid}/builds/${spinach.id}/erase`, cast.developer);
    expect(again.status).toBe(403);
    expect(again.body).toEqual({ message: '403 Forbidden - Build is not erasable!' });
    const ship = await buildNamed(s.ctx, pipelineId, 'ship'); // pending, not finished
    await replaceTrace(s.ctx, ship, 'x');
    expect((await s.api('POST', `/projects/${pid}/builds/${ship.id}/erase`, cast.developer)).status).toBe(403);
  });

  it('actions on unknown builds are 404', async () => {
    for (const a of ['cancel', 'retry', 'erase', 'artifacts/keep', 'play']) {
      expect((await s.api('POST', `/projects/${pid}/builds/999999/${a}`, cast.developer)).status).toBe(404);
    }
  });
});

describe('expired artifacts', () => {
  it('the worker removes expired artifacts at start', async () => {
    const compile = await buildNamed(s.ctx, pipelineId, 'compile');
    await artifacts(compile.id, 'old', '1 sec');
    await exec(s, `UPDATE commit_statuses SET artifacts_expire_at = ? WHERE id = ?`, ['2000-01-01T00:00:00.000Z', compile.id]);
    artifactExpiryWorker.start(s.ctx);
    for (let i = 0; i < 50 && (await findBuild(s.ctx, compile.id))!.artifactsFile; i++) await new Promise((r) => setTimeout(r, 20));
    await artifactExpiryWorker.stop(s.ctx);
    expect((await findBuild(s.ctx, compile.id))!.artifactsFile).toBeNull();
  });
});

describe('authorization matrix', () => {
  async function setup(name: string, visibility: number, publicBuilds: boolean) {
    const id = (await makeProject(s, cast.owner, name, { visibility, extra: { public_builds: publicBuilds } })).id;
    await addCastMembers(s.ctx, cast, id);
    await pushFiles(s.ctx, id, cast.owner.id, { '.gitlab-ci.yml': 'a:\n  script: x\n' });
    const p = (await pipelinesOf(s.ctx, id))[0]!;
    return { id, build: (await buildNamed(s.ctx, p.id, 'a')).id };
  }
  const readStatus = async (u: TestUser | null, id: number) => (await s.api('GET', `/projects/${id}/builds`, u)).status;

  it('reads: anonymous 401; members reporter+; non-members by visibility and public_builds', async () => {
    const priv = await setup('az-private', 0, true);
    const pubOn = await setup('az-public-on', 20, true);
    const pubOff = await setup('az-public-off', 20, false);
    const intOn = await setup('az-internal-on', 10, true);
    const intOff = await setup('az-internal-off', 10, false);
    for (const p of [priv, pubOn, pubOff, intOn, intOff]) {
      expect(await readStatus(null, p.id)).toBe(401);
      for (const u of [cast.reporter, cast.developer, cast.master, cast.owner, cast.admin]) expect(await readStatus(u, p.id)).toBe(200);
    }
    expect(await readStatus(cast.guest, priv.id)).toBe(403);
    expect(await readStatus(cast.nonMember, priv.id)).toBe(404);
    expect(await readStatus(cast.nonMember, pubOn.id)).toBe(200);
    expect(await readStatus(cast.external, pubOn.id)).toBe(200);
    expect(await readStatus(cast.nonMember, pubOff.id)).toBe(403);
    expect(await readStatus(cast.nonMember, intOn.id)).toBe(200);
    expect(await readStatus(cast.external, intOn.id)).toBe(404);
    expect(await readStatus(cast.nonMember, intOff.id)).toBe(403);
    // guests of public projects with public builds read them like anyone
    expect(await readStatus(cast.guest, pubOn.id)).toBe(200);
    expect((await s.api('GET', `/projects/${pubOn.id}/builds/${pubOn.build}/trace`, cast.nonMember)).status).toBe(404);
  });

  it('actions need developer or higher', async () => {
    const pub = await setup('az-actions', 20, true);
    for (const u of [cast.nonMember, cast.guest, cast.reporter]) {
      for (const a of ['cancel', 'retry', 'erase', 'artifacts/keep', 'play']) {
        expect((await s.api('POST', `/projects/${pub.id}/builds/${pub.build}/${a}`, u)).status).toBe(403);
      }
    }
    expect((await s.api('POST', `/projects/${pub.id}/builds/${pub.build}/cancel`, null)).status).toBe(401);
    expect((await s.api('POST', `/projects/${pub.id}/builds/${pub.build}/cancel`, cast.developer)).status).toBe(201);
    expect((await s.api('POST', `/projects/${pub.id}/builds/${pub.build}/retry`, cast.master)).status).toBe(201);
    expect((await s.api('POST', `/projects/${pub.id}/builds/${pub.build}/retry`, cast.admin)).status).toBe(201);
    expect((await s.api('POST', `/projects/${pub.id}/builds/${pub.build}/play`, cast.owner)).status).toBe(400);
    const priv = await setup('az-actions-private', 0, true);
    expect((await s.api('POST', `/projects/${priv.id}/builds/${priv.build}/cancel`, cast.nonMember)).status).toBe(404);
  });

  it('builds disabled: 403 for everyone', async () => {
    const id = (await makeProject(s, cast.owner, 'az-disabled', { extra: { builds_enabled: false } })).id;
    expect(await readStatus(cast.owner, id)).toBe(403);
    expect(await readStatus(cast.admin, id)).toBe(403);
  });
});
