/**
 * Deploy keys: /deploy_keys (admins) and /projects/:id/deploy_keys with its `keys` alias (list, get, add, enable,
 * disable, delete): every route, its errors and authorization (anonymous 401, non-member 404, guest, reporter and
 * developer 403; master, owner and admin allowed). Deploy keys are read-only and found by the SSH server's lookup.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer, type TestUser } from '../helpers/app.js';
import { addCastMembers, addMemberAsync, makeCast, makeGroupAsync, makeProject, type Cast } from '../helpers/fixtures.js';
import { generateKeyPair } from '../helpers/ssh-keys.js';
import { keyForSshAsync } from '../../daemon/services/keys/index.js';

let s: TestServer;
let cast: Cast;
let priv: { id: number; path_with_namespace: string };
let pub: { id: number; path_with_namespace: string };
const ed = () => generateKeyPair('ed25519', { comment: 'deploy@ci' });
const linkCount = async () => (await s.ctx.data.get<{ n: number }>(`SELECT COUNT(*) AS n FROM deploy_keys_projects`))!.n;
const keyCount = async () => (await s.ctx.data.get<{ n: number }>(`SELECT COUNT(*) AS n FROM keys`))!.n;
const keyForSsh = keyForSshAsync;

beforeAll(async () => {
  s = await startTestServer();
  cast = await makeCast(s, 'dk');
  priv = await makeProject(s, cast.owner, 'deploy-private', { visibility: 0 });
  pub = await makeProject(s, cast.owner, 'deploy-public', { visibility: 20 });
  await addCastMembers(s.ctx, cast, priv.id);
  await addCastMembers(s.ctx, cast, pub.id);
});
afterAll(async () => s?.close());

for (const path of ['deploy_keys', 'keys']) {
  describe(`/projects/:id/${path}`, () => {
    const base = (p: { id: number }) => `/projects/${p.id}/${path}`;

    it('adds (201 SSHKey, read-only), lists with pagination headers, shows and deletes (raw record) a deploy key', async () => {
      const pair = ed();
      const created = await s.api('POST', base(priv), cast.master, { title: 'CI deploy', key: pair.publicKey });
      expect(created.status).toBe(201);
      expect(created.body).toEqual({ id: expect.any(Number), title: 'CI deploy', key: pair.publicKey, created_at: expect.any(String) });
      const row = (await s.ctx.data.get<Record<string, unknown>>(`SELECT * FROM keys WHERE id = ?`, [created.body.id]))!;
      expect(row).toMatchObject({ type: 'DeployKey', user_id: null, fingerprint: pair.md5, fingerprint_sha256: pair.sha256 });
      expect(!!row.can_push).toBe(false);

      const second = await s.api('POST', base(priv), cast.owner, { title: 'second', key: ed().publicKey });
      const list = await s.api('GET', `${base(priv)}?per_page=1`, cast.master);
      expect(list.status).toBe(200);
      expect(list.body).toEqual([created.body]);
      expect(list.headers['x-total']).toBe('2');
      expect((await s.api('GET', `${base(priv)}?per_page=1&page=2`, cast.master)).body).toEqual([second.body]);

      const one = await s.api('GET', `${base(priv)}/${created.body.id}`, cast.master);
      expect(one.body).toEqual(created.body);
      const byPath = await s.api('GET', `/projects/${encodeURIComponent(priv.path_with_namespace)}/${path}/${created.body.id}`, cast.owner);
      expect(byPath.body).toEqual(created.body);

      const removed = await s.api('DELETE', `${base(priv)}/${created.body.id}`, cast.master);
      expect(removed.status).toBe(200);
      expect(removed.body).toMatchObject({ id: created.body.id, type: 'DeployKey', user_id: null, title: 'CI deploy', fingerprint: pair.md5, can_push: false });
      // used by no other project: the key itself is gone
      expect(await keyForSsh(s.ctx, pair.sha256)).toBeNull();
      await s.api('DELETE', `${base(priv)}/${second.body.id}`, cast.master);
      expect((await s.api('GET', base(priv), cast.master)).body).toEqual([]);
    });

    it('GET and DELETE of a key that is not on the project: 404 `404 Not found`; a text key id: 400', async () => {
      const elsewhere = await s.api('POST', base(pub), cast.master, { title: 'pub only', key: ed().publicKey });
      for (const method of ['GET', 'DELETE'] as const) {
        for (const id of [elsewhere.body.id, 999999]) {
          const r = await s.api(method, `${base(priv)}/${id}`, cast.master);
          expect(r.status, `${method} ${id}`).toBe(404);
          expect(r.body).toEqual({ message: '404 Not found' });
        }
      }
      expect((await s.api('GET', `${base(pub)}/${elsewhere.body.id}`, cast.master)).status).toBe(200);
      expect((await s.api('GET', `${base(priv)}/abc`, cast.master)).status).toBe(400);
      await s.api('DELETE', `${base(pub)}/${elsewhere.body.id}`, cast.master);
    });

    it('POST validation: "<attr>" not given, the 8.x validation hash, and a user key is not a deploy key', async () => {
      const before = [await keyCount(), await linkCount()];
      expect((await s.api('POST', base(priv), cast.master, { key: ed().publicKey })).body).toEqual({ message: '400 (Bad request) "title" not given' });
      expect((await s.api('POST', base(priv), cast.master, { title: 'x' })).body).toEqual({ message: '400 (Bad request) "key" not given' });
      const bad = await s.api('POST', base(priv), cast.master, { title: 'x', key: 'ssh-rsa AAAA' });
      expect(bad.status).toBe(400);
      expect(bad.body).toEqual({ message: { fingerprint: ['cannot be generated'] } });
      const short = await s.api('POST', base(priv), cast.master, { title: 'x', key: generateKeyPair('rsa', { bits: 1024 }).publicKey });
      expect(short.body).toEqual({ message: { key: ['must be at least 2048 bits'] } });
      const userKey = ed();
      expect((await s.api('POST', '/user/keys', cast.developer, { title: 'mine', key: userKey.publicKey })).status).toBe(201);
      const taken = await s.api('POST', base(priv), cast.master, { title: 'steal', key: userKey.publicKey });
      expect(taken.body).toEqual({ message: { fingerprint: ['has already been taken'] } });
      expect([await keyCount(), await linkCount()]).toEqual([before[0]! + 1, before[1]]);
    });
  });
}

describe('adding a key that already exists', () => {
  it('the key already on the project is returned unchanged (201), even with another comment', async () => {
    const pair = ed();
    const first = await s.api('POST', `/projects/${priv.id}/deploy_keys`, cast.master, { title: 'one', key: pair.publicKey });
    const [type, data] = pair.publicKey.split(' ');
    const again = await s.api('POST', `/projects/${priv.id}/deploy_keys`, cast.master, { title: 'two', key: `${type} ${data} renamed` });
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    expect((await s.api('GET', `/projects/${priv.id}/deploy_keys`, cast.master)).body.filter((k: { id: number }) => k.id === first.body.id)).toHaveLength(1);
  });

  it('a deploy key of another project the caller masters is enabled here, not copied', async () => {
    const other = await makeProject(s, cast.owner, 'deploy-other');
    await addMemberAsync(s.ctx, { type: 'Project', id: other.id }, cast.master.id, 40);
    const pair = ed();
    const onOther = await s.api('POST', `/projects/${other.id}/deploy_keys`, cast.master, { title: 'shared', key: pair.publicKey });
    const linked = await s.api('POST', `/projects/${pub.id}/deploy_keys`, cast.master, { title: 'ignored', key: pair.publicKey });
    expect(linked.status).toBe(201);
    expect(linked.body).toEqual(onOther.body);
    expect((await keyForSsh(s.ctx, pair.sha256))!.deployProjectIds).toEqual([pub.id, other.id].sort((a, b) => a - b));
  });

  it('a deploy key of a project the caller does not master is refused: fingerprint has already been taken', async () => {
    const stranger = await s.user('dkstranger');
    const theirs = await makeProject(s, stranger, 'stranger-project');
    const pair = ed();
    expect((await s.api('POST', `/projects/${theirs.id}/deploy_keys`, stranger, { title: 's', key: pair.publicKey })).status).toBe(201);
    const r = await s.api('POST', `/projects/${priv.id}/deploy_keys`, cast.master, { title: 'mine', key: pair.publicKey });
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ message: { fingerprint: ['has already been taken'] } });
    expect((await keyForSsh(s.ctx, pair.sha256))!.deployProjectIds).toEqual([theirs.id]);
  });
});

describe('enable and disable', () => {
  let source: { id: number };
  let key: { id: number; title: string };
  let pairSha: string;

  beforeAll(async () => {
    source = await makeProject(s, cast.owner, 'deploy-source');
    await addMemberAsync(s.ctx, { type: 'Project', id: source.id }, cast.master.id, 40);
    await addMemberAsync(s.ctx, { type: 'Project', id: source.id }, cast.developer.id, 30);
    const pair = ed();
    pairSha = pair.sha256;
    key = (await s.api('POST', `/projects/${source.id}/deploy_keys`, cast.owner, { title: 'source key', key: pair.publicKey })).body;
  });

  it('POST .../:key_id/enable links an accessible deploy key (201 SSHKey), twice harmlessly', async () => {
    for (let i = 0; i < 2; i++) {
      const r = await s.api('POST', `/projects/${priv.id}/deploy_keys/${key.id}/enable`, cast.master);
      expect(r.status).toBe(201);
      expect(r.body).toMatchObject({ id: key.id, title: 'source key' });
    }
    expect((await keyForSsh(s.ctx, pairSha))!.deployProjectIds).toEqual([priv.id, source.id].sort((a, b) => a - b));
    expect((await s.api('GET', `/projects/${priv.id}/keys/${key.id}`, cast.master)).status).toBe(200);
  });

  it('enable of a key the caller cannot reach (developer on its project only), a user key or a missing key: `404 Deploy Key Not Found`', async () => {
    const theirOwn = await makeProject(s, cast.developer, 'dev-own');
    const userKey = (await s.api('POST', '/user/keys', cast.developer, { title: 'u', key: ed().publicKey })).body;
    for (const id of [key.id, userKey.id, 999999]) {
      const r = await s.api('POST', `/projects/${theirOwn.id}/deploy_keys/${id}/enable`, cast.developer);
      expect(r.status, String(id)).toBe(404);
      expect(r.body).toEqual({ message: '404 Deploy Key Not Found' });
    }
    expect((await s.api('GET', `/projects/${theirOwn.id}/deploy_keys`, cast.developer)).body).toEqual([]);
  });

  it('an admin may enable any deploy key', async () => {
    const adminProject = await makeProject(s, s.root, 'admin-deploy');
    expect((await s.api('POST', `/projects/${adminProject.id}/keys/${key.id}/enable`, s.root)).status).toBe(201);
  });

  it('DELETE .../:key_id/disable unlinks it from this project only (200 SSHKey); not enabled: `404 Deploy Key Not Found`', async () => {
    const r = await s.api('DELETE', `/projects/${priv.id}/deploy_keys/${key.id}/disable`, cast.master);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ id: key.id, title: 'source key' });
    expect((await keyForSsh(s.ctx, pairSha))!.deployProjectIds).not.toContain(priv.id);
    expect((await keyForSsh(s.ctx, pairSha))!.deployProjectIds).toContain(source.id);
    const again = await s.api('DELETE', `/projects/${priv.id}/deploy_keys/${key.id}/disable`, cast.master);
    expect(again.status).toBe(404);
    expect(again.body).toEqual({ message: '404 Deploy Key Not Found' });
  });

  it('DELETE of a key used by another project removes it here and keeps it there', async () => {
    await s.api('POST', `/projects/${priv.id}/deploy_keys/${key.id}/enable`, cast.master);
    expect((await s.api('DELETE', `/projects/${priv.id}/deploy_keys/${key.id}`, cast.master)).status).toBe(200);
    expect((await keyForSsh(s.ctx, pairSha))!.deployProjectIds).not.toContain(priv.id);
    expect((await s.api('GET', `/projects/${source.id}/deploy_keys/${key.id}`, cast.master)).status).toBe(200);
  });
});

describe('GET /deploy_keys', () => {
  it('admins list every deploy key with pagination headers; others 403; anonymous 401', async () => {
    const r = await s.api('GET', '/deploy_keys', s.root);
    expect(r.status).toBe(200);
    const ids = (await s.ctx.data.all<{ id: number }>(`SELECT id FROM keys WHERE type = 'DeployKey' ORDER BY id`)).map((x) => x.id);
    expect(ids.length).toBeGreaterThan(0);
    expect(r.body.map((k: { id: number }) => k.id)).toEqual(ids.slice(0, 20));
    expect(r.headers['x-total']).toBe(String(ids.length));
    expect(Object.keys(r.body[0]).sort()).toEqual(['created_at', 'id', 'key', 'title']);
    for (const who of [cast.owner, cast.master, cast.nonMember]) {
      const denied = await s.api('GET', '/deploy_keys', who);
      expect(denied.status).toBe(403);
      expect(denied.body).toEqual({ message: '403 Forbidden' });
    }
    expect((await s.api('GET', '/deploy_keys', null)).status).toBe(401);
  });
});

describe('authorization of the project routes', () => {
  let keyId: number;
  beforeAll(async () => {
    keyId = (await s.api('POST', `/projects/${pub.id}/deploy_keys`, cast.owner, { title: 'authz', key: ed().publicKey })).body.id;
    await s.api('POST', `/projects/${priv.id}/deploy_keys/${keyId}/enable`, cast.owner);
  });

  const routes = (p: { id: number }, body: () => unknown) => [
    ['GET', `/projects/${p.id}/deploy_keys`], ['GET', `/projects/${p.id}/keys/${keyId}`],
    ['POST', `/projects/${p.id}/deploy_keys`, body()], ['POST', `/projects/${p.id}/deploy_keys`, {}],
    ['POST', `/projects/${p.id}/keys/${keyId}/enable`], ['DELETE', `/projects/${p.id}/deploy_keys/${keyId}/disable`],
    ['DELETE', `/projects/${p.id}/keys/${keyId}`],
  ] as [string, string, unknown?][];

  it('anonymous 401; non-member 404 on a private project and 403 on a public one; guest, reporter, developer, external 403; nothing changes', async () => {
    const before = [await keyCount(), await linkCount()];
    for (const project of [priv, pub]) {
      for (const [method, path, body] of routes(project, () => ({ title: 'x', key: ed().publicKey }))) {
        expect((await s.api(method as 'GET', path, null, body)).status, `${method} ${path} anonymous`).toBe(401);
        const outsider = await s.api(method as 'GET', path, cast.nonMember, body);
        expect(outsider.status, `${method} ${path} non-member`).toBe(project === priv ? 404 : 403);
        if (project === priv) expect(outsider.body).toEqual({ message: '404 Project Not Found' });
        for (const role of ['guest', 'reporter', 'developer', 'external'] as const) {
          const r = await s.api(method as 'GET', path, cast[role], body);
          const expected = role === 'external' && project === priv ? 404 : 403;
          expect(r.status, `${method} ${path} ${role}`).toBe(expected);
        }
      }
    }
    expect([await keyCount(), await linkCount()]).toEqual(before);
  });

  it('master, owner and admin are allowed', async () => {
    for (const who of [cast.master, cast.owner, s.root] as TestUser[]) {
      expect((await s.api('GET', `/projects/${priv.id}/deploy_keys`, who)).status).toBe(200);
      expect((await s.api('GET', `/projects/${priv.id}/deploy_keys/${keyId}`, who)).status).toBe(200);
      expect((await s.api('DELETE', `/projects/${priv.id}/deploy_keys/${keyId}/disable`, who)).status).toBe(200);
      expect((await s.api('POST', `/projects/${priv.id}/deploy_keys/${keyId}/enable`, who)).status).toBe(201);
    }
  });

  it('a group master reaches the deploy keys of the group’s projects, and may enable them elsewhere', async () => {
    const groupMaster = await s.user('dkgroupmaster');
    const groupId = await makeGroupAsync(s.ctx, 'dk-group', { owner: cast.owner });
    await addMemberAsync(s.ctx, { type: 'Namespace', id: groupId }, groupMaster.id, 40);
    const inGroup = await makeProject(s, cast.owner, 'in-group', { namespaceId: groupId });
    const k = (await s.api('POST', `/projects/${inGroup.id}/deploy_keys`, groupMaster, { title: 'g', key: ed().publicKey }));
    expect(k.status).toBe(201);
    const own = await makeProject(s, groupMaster, 'gm-own');
    expect((await s.api('POST', `/projects/${own.id}/deploy_keys/${k.body.id}/enable`, groupMaster)).status).toBe(201);
  });
});

describe('deploy keys and their projects', () => {
  it('a deleted project takes its links; the key stays for its other projects', async () => {
    const doomed = await makeProject(s, cast.owner, 'deploy-doomed');
    const keep = await makeProject(s, cast.owner, 'deploy-keep');
    const pair = ed();
    const k = (await s.api('POST', `/projects/${doomed.id}/deploy_keys`, cast.owner, { title: 'k', key: pair.publicKey })).body;
    await s.api('POST', `/projects/${keep.id}/deploy_keys/${k.id}/enable`, cast.owner);
    expect((await s.api('DELETE', `/projects/${doomed.id}`, cast.owner)).status).toBe(200);
    expect(await keyForSsh(s.ctx, pair.sha256)).toMatchObject({ key: { id: k.id, type: 'DeployKey', canPush: false }, user: null, deployProjectIds: [keep.id] });
  });

  it('a deleted project deletes the deploy keys no other project uses: the same key can be added elsewhere (201)', async () => {
    const a = await makeProject(s, cast.owner, 'deploy-orphan-a');
    const b = await makeProject(s, cast.owner, 'deploy-orphan-b');
    const pair = ed();
    const k = (await s.api('POST', `/projects/${a.id}/deploy_keys`, cast.owner, { title: 'k', key: pair.publicKey })).body;
    expect((await s.api('DELETE', `/projects/${a.id}`, cast.owner)).status).toBe(200);
    expect(await keyForSsh(s.ctx, pair.sha256)).toBeNull();
    expect((await s.api('GET', `/deploy_keys?per_page=100`, s.root)).body.map((x: { id: number }) => x.id)).not.toContain(k.id);
    const again = await s.api('POST', `/projects/${b.id}/deploy_keys`, cast.owner, { title: 'again', key: pair.publicKey });
    expect(again.status, JSON.stringify(again.body)).toBe(201);
    expect((await keyForSsh(s.ctx, pair.sha256))!.deployProjectIds).toEqual([b.id]);
  });

  it('deleting a user or a group deletes the deploy keys only their projects use, and keeps a key shared with another project', async () => {
    const doomed = await s.user('dkdoomed', { projects_limit: 10 });
    const mine = await makeProject(s, doomed, 'doomed-own');
    const groupId = await makeGroupAsync(s.ctx, 'dk-doomed-group', { owner: doomed });
    const inGroup = await makeProject(s, doomed, 'doomed-in-group', { namespaceId: groupId });
    const survivor = await makeProject(s, cast.owner, 'deploy-survivor');
    await addMemberAsync(s.ctx, { type: 'Project', id: survivor.id }, doomed.id, 40);
    const [own, grouped, shared, sharedTwice] = [ed(), ed(), ed(), ed()];
    expect((await s.api('POST', `/projects/${mine.id}/deploy_keys`, doomed, { title: 'own', key: own.publicKey })).status).toBe(201);
    expect((await s.api('POST', `/projects/${inGroup.id}/deploy_keys`, doomed, { title: 'grouped', key: grouped.publicKey })).status).toBe(201);
    // on both of the user's projects: the key goes with the second, once the first has let it go
    expect((await s.api('POST', `/projects/${mine.id}/deploy_keys`, doomed, { title: 'twice', key: sharedTwice.publicKey })).status).toBe(201);
    expect((await s.api('POST', `/projects/${inGroup.id}/deploy_keys`, doomed, { title: 'twice', key: sharedTwice.publicKey })).status).toBe(201);
    expect((await s.api('POST', `/projects/${mine.id}/deploy_keys`, doomed, { title: 'shared', key: shared.publicKey })).status).toBe(201);
    expect((await s.api('POST', `/projects/${survivor.id}/deploy_keys`, doomed, { title: 'shared', key: shared.publicKey })).status).toBe(201);

    expect((await s.api('DELETE', `/groups/${groupId}`, doomed)).status).toBe(200);
    expect(await keyForSsh(s.ctx, grouped.sha256)).toBeNull();
    expect((await keyForSsh(s.ctx, sharedTwice.sha256))!.deployProjectIds).toEqual([mine.id]);
    expect((await s.api('DELETE', `/users/${doomed.id}`, s.root)).status).toBe(200);
    expect(await keyForSsh(s.ctx, own.sha256)).toBeNull();
    expect(await keyForSsh(s.ctx, sharedTwice.sha256)).toBeNull();
    expect((await keyForSsh(s.ctx, shared.sha256))!.deployProjectIds).toEqual([survivor.id]);
  });
});

describe('races between requests', () => {
  it('the same new key added at once: to one project 201 twice with one key; to projects of two strangers one 201 and one 400', async () => {
    const target = await makeProject(s, cast.owner, 'deploy-race');
    const pair = ed();
    const same = await Promise.all([1, 2].map((i) => s.api('POST', `/projects/${target.id}/deploy_keys`, cast.owner, { title: `race ${i}`, key: pair.publicKey })));
    expect(same.map((r) => r.status)).toEqual([201, 201]);
    expect(same[0]!.body.id).toBe(same[1]!.body.id);
    expect((await keyForSsh(s.ctx, pair.sha256))!.deployProjectIds).toEqual([target.id]);

    const [one, two] = await Promise.all([s.user('dkrace1'), s.user('dkrace2')]);
    const [p1, p2] = await Promise.all([makeProject(s, one!, 'race-one'), makeProject(s, two!, 'race-two')]);
    const other = ed();
    const apart = await Promise.all([
      s.api('POST', `/projects/${p1.id}/deploy_keys`, one!, { title: 'mine', key: other.publicKey }),
      s.api('POST', `/projects/${p2.id}/deploy_keys`, two!, { title: 'mine too', key: other.publicKey }),
    ]);
    expect(apart.map((r) => r.status).sort()).toEqual([201, 400]);
    expect(apart.find((r) => r.status === 400)!.body).toEqual({ message: { fingerprint: ['has already been taken'] } });
    expect(await s.ctx.data.get('SELECT COUNT(*) AS n FROM keys WHERE fingerprint = ?', [other.md5])).toEqual({ n: 1 });
  });

  it('a key removed from its two projects at once, or removed while its other project is deleted, is deleted: none is left behind', async () => {
    for (const second of ['remove', 'delete project'] as const) {
      const a = await makeProject(s, cast.owner, `deploy-both-a-${second.length}`);
      const b = await makeProject(s, cast.owner, `deploy-both-b-${second.length}`);
      const pair = ed();
      const k = (await s.api('POST', `/projects/${a.id}/deploy_keys`, cast.owner, { title: 'both', key: pair.publicKey })).body;
      expect((await s.api('POST', `/projects/${b.id}/deploy_keys/${k.id}/enable`, cast.owner)).status).toBe(201);
      const answers = await Promise.all([
        s.api('DELETE', `/projects/${a.id}/deploy_keys/${k.id}`, cast.owner),
        second === 'remove' ? s.api('DELETE', `/projects/${b.id}/deploy_keys/${k.id}`, cast.owner) : s.api('DELETE', `/projects/${b.id}`, cast.owner),
      ]);
      expect(answers.map((r) => r.status), second).toEqual([200, 200]);
      expect(await keyForSsh(s.ctx, pair.sha256), second).toBeNull();
    }
  });

  it('a key enabled on one project while removed from its only other one: kept and linked, or gone and 404; never half of each', async () => {
    for (let round = 0; round < 3; round++) {
      const a = await makeProject(s, cast.owner, `deploy-swap-a-${round}`);
      const b = await makeProject(s, cast.owner, `deploy-swap-b-${round}`);
      const pair = ed();
      const k = (await s.api('POST', `/projects/${a.id}/deploy_keys`, cast.owner, { title: 'swap', key: pair.publicKey })).body;
      const [enabled, removed] = await Promise.all([
        s.api('POST', `/projects/${b.id}/deploy_keys/${k.id}/enable`, cast.owner),
        s.api('DELETE', `/projects/${a.id}/deploy_keys/${k.id}`, cast.owner),
      ]);
      expect(removed.status).toBe(200);
      const found = await keyForSsh(s.ctx, pair.sha256);
      if (enabled.status === 201) {
        expect(found!.deployProjectIds).toEqual([b.id]);
      } else {
        expect(enabled).toMatchObject({ status: 404, body: { message: '404 Deploy Key Not Found' } });
        expect(found).toBeNull();
      }
    }
  });

  it('a project deleted meanwhile: adding or enabling a key answers 404 Project Not Found and writes nothing, never a 500', async () => {
    const { addProjectDeployKey, enableDeployKey } = await import('../../daemon/services/keys/index.js');
    const { findProject: findProjectAsync } = await import('../../daemon/services/projects/projects.js');
    const { findUser: findUserAsync } = await import('../../daemon/services/users/users.js');
    const gone = await makeProject(s, cast.owner, 'deploy-vanishing');
    const owner = await findUserAsync(s.ctx, cast.owner.id);
    const stale = await findProjectAsync(s.ctx, owner, String(gone.id), 'admin_project');
    const source = await makeProject(s, cast.owner, 'deploy-vanishing-source');
    const existing = (await s.api('POST', `/projects/${source.id}/deploy_keys`, cast.owner, { title: 'src', key: ed().publicKey })).body;
    expect((await s.api('DELETE', `/projects/${gone.id}`, cast.owner)).status).toBe(200);
    const before = [await keyCount(), await linkCount()];
    const pair = ed();
    await expect(addProjectDeployKey(s.ctx, owner, stale, { title: 'late', key: pair.publicKey })).rejects.toMatchObject({ statusCode: 404, body: { message: '404 Project Not Found' } });
    await expect(enableDeployKey(s.ctx, owner, stale, existing.id)).rejects.toMatchObject({ statusCode: 404, body: { message: '404 Project Not Found' } });
    expect([await keyCount(), await linkCount()]).toEqual(before);
  });

  it('ids beyond PostgreSQL’s integer answer 404 as any missing key', async () => {
    for (const id of [2147483648, 9007199254740991]) {
      expect((await s.api('GET', `/projects/${priv.id}/deploy_keys/${id}`, cast.master)).body).toEqual({ message: '404 Not found' });
      expect((await s.api('DELETE', `/projects/${priv.id}/deploy_keys/${id}`, cast.master)).body).toEqual({ message: '404 Not found' });
      expect((await s.api('POST', `/projects/${priv.id}/deploy_keys/${id}/enable`, cast.master)).body).toEqual({ message: '404 Deploy Key Not Found' });
      expect((await s.api('DELETE', `/projects/${priv.id}/deploy_keys/${id}/disable`, cast.master)).body).toEqual({ message: '404 Deploy Key Not Found' });
    }
  });
});
