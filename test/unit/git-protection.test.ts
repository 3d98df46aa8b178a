/** Branch protection decisions: rules service, default_branch_protection levels, per-ref pre-receive rules by role. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/app.js';
import {
  branchRules, canMergeIntoBranch, canPushToBranch, isProtected, listProtectedBranches, protectBranch, pushRefRules, ruleMatches,
  unprotectBranch, PROTECTION_MESSAGES,
} from '../../daemon/services/repository/protected-branches.js';
import { findUser } from '../../daemon/services/users/users.js';
import { lookupProjectAsync } from '../../daemon/services/projects/projects.js';
import type { ProjectRow, UserRow } from '../../daemon/db/schema.js';

const A = 'a'.repeat(40);
const B = 'b'.repeat(40);
const Z = '0'.repeat(40);

let s: TestServer;
let project: ProjectRow;
const users: Record<string, UserRow> = {};

async function setProtection(level: number) {
  expect((await s.api('PUT', '/application/settings', s.root, { default_branch_protection: level })).status).toBe(200);
}

beforeAll(async () => {
  s = await startTestServer();
  const owner = await s.user('owner');
  const created = await s.api('POST', '/projects', owner, { name: 'prot' });
  expect(created.status).toBe(201);
  for (const [name, level] of [['dev', 30], ['master', 40], ['reporter', 20]] as const) {
    const u = await s.user(name);
    expect((await s.api('POST', `/projects/${created.body.id}/members`, owner, { user_id: u.id, access_level: level })).status).toBe(201);
    users[name] = await findUser(s.ctx, u.id);
  }
  users.owner = await findUser(s.ctx, owner.id);
  users.admin = await findUser(s.ctx, s.root.id);
  project = (await lookupProjectAsync(s.ctx, created.body.id))!;
});
afterAll(() => s?.close());

describe('rules', () => {
  it('matches exact names and * patterns', () => {
    expect(ruleMatches('master', 'master')).toBe(true);
    expect(ruleMatches('master', 'master2')).toBe(false);
    expect(ruleMatches('release/*', 'release/1.0')).toBe(true);
    expect(ruleMatches('release/*', 'release')).toBe(false);
    expect(ruleMatches('*-stable', '8-12-stable')).toBe(true);
    expect(ruleMatches('a.b*', 'axb1')).toBe(false);
  });

  it('protects, keeps flags unless explicitly changed, lists and unprotects', async () => {
    const r = await protectBranch(s.ctx, project.id, 'release', { developersCanPush: true });
    expect(r).toMatchObject({ name: 'release', developersCanPush: true, developersCanMerge: false });
    expect(await protectBranch(s.ctx, project.id, 'release', { developersCanMerge: true })).toMatchObject({ developersCanPush: true, developersCanMerge: true });
    expect(await protectBranch(s.ctx, project.id, 'release', { developersCanPush: false })).toMatchObject({ developersCanPush: false, developersCanMerge: true });
    expect((await listProtectedBranches(s.ctx, project.id)).map((p) => p.name)).toEqual(['release']);
    expect(await unprotectBranch(s.ctx, project.id, 'release')).toBe(true);
    expect(await unprotectBranch(s.ctx, project.id, 'release')).toBe(false);
  });

  it('protects the default branch by the setting, explicit rules winning', async () => {
    await setProtection(2);
    expect(await branchRules(s.ctx, project, 'master')).toEqual({ protected: true, source: 'default', developersCanPush: false, developersCanMerge: false });
    await setProtection(1);
    expect(await branchRules(s.ctx, project, 'master')).toEqual({ protected: true, source: 'default', developersCanPush: true, developersCanMerge: true });
    await setProtection(0);
    expect(await isProtected(s.ctx, project, 'master')).toBe(false);
    await protectBranch(s.ctx, project.id, 'master');
    expect(await branchRules(s.ctx, project, 'master')).toMatchObject({ protected: true, source: 'explicit', developersCanPush: false });
    await unprotectBranch(s.ctx, project.id, 'master');
    expect(await isProtected(s.ctx, project, 'feature')).toBe(false);
  });
});

describe('who may push', () => {
  it('follows roles on protected and unprotected branches', async () => {
    await setProtection(2);
    await protectBranch(s.ctx, project.id, 'rel-*', { developersCanMerge: true });
    const can = (u: string, b: string) => canPushToBranch(s.ctx, users[u]!, project, b);
    expect(await Promise.all([can('reporter', 'feature'), can('dev', 'feature'), can('master', 'feature')])).toEqual([false, true, true]);
    expect(await Promise.all([can('dev', 'master'), can('master', 'master'), can('owner', 'master'), can('admin', 'master')])).toEqual([false, true, true, true]);
    expect(await can('dev', 'rel-1')).toBe(false);
    expect(await canMergeIntoBranch(s.ctx, users.dev!, project, 'rel-1')).toBe(true);
    expect(await canMergeIntoBranch(s.ctx, users.dev!, project, 'master')).toBe(false);
    expect(await canMergeIntoBranch(s.ctx, users.reporter!, project, 'rel-1')).toBe(false);
    await unprotectBranch(s.ctx, project.id, 'rel-*');
  });

  it('builds pre-receive rules per ref', async () => {
    await setProtection(2);
    await protectBranch(s.ctx, project.id, 'prod', { developersCanPush: true });
    const cmds = [
      { ref: 'refs/heads/master', oldSha: A, newSha: B },
      { ref: 'refs/heads/prod', oldSha: A, newSha: B },
      { ref: 'refs/heads/prod', oldSha: A, newSha: Z },
      { ref: 'refs/heads/feature', oldSha: A, newSha: Z },
      { ref: 'refs/tags/v1', oldSha: Z, newSha: A },
    ];
    const dev = await pushRefRules(s.ctx, project, users.dev!, cmds.filter((c) => c.newSha !== Z || c.ref !== 'refs/heads/prod'));
    expect(dev).toEqual({
      'refs/heads/master': { deny: PROTECTION_MESSAGES.push },
      'refs/heads/prod': { forcePush: PROTECTION_MESSAGES.forcePush },
      'refs/heads/feature': {},
      'refs/tags/v1': {},
    });
    const master = await pushRefRules(s.ctx, project, users.master!, [cmds[0]!, cmds[2]!]);
    expect(master).toEqual({ 'refs/heads/master': { forcePush: PROTECTION_MESSAGES.forcePush }, 'refs/heads/prod': { deny: PROTECTION_MESSAGES.delete } });
    // Creating the default branch (first push) is not held back by the setting; explicit rules still apply.
    expect(await pushRefRules(s.ctx, project, users.dev!, [{ ref: 'refs/heads/master', oldSha: Z, newSha: A }])).toEqual({ 'refs/heads/master': {} });
    await protectBranch(s.ctx, project.id, 'master');
    expect(await pushRefRules(s.ctx, project, users.dev!, [{ ref: 'refs/heads/master', oldSha: Z, newSha: A }])).toEqual({ 'refs/heads/master': { deny: PROTECTION_MESSAGES.push } });
    await setProtection(1);
    await unprotectBranch(s.ctx, project.id, 'master');
    expect(await pushRefRules(s.ctx, project, users.dev!, [cmds[0]!])).toEqual({ 'refs/heads/master': { forcePush: PROTECTION_MESSAGES.forcePush } });
    await setProtection(0);
    expect(await pushRefRules(s.ctx, project, users.dev!, [{ ref: 'refs/heads/master', oldSha: A, newSha: Z }])).toEqual({ 'refs/heads/master': {} });
  });
});
