/**
 * The authorization matrix (issue 12, item 1): every route of the running app (its OpenAPI document, plus the routes
 * the router holds outside it: git over HTTP, uploads, health, /oauth ...) called by every kind of caller on private,
 * internal and public subjects with real ids, against the policy table (policy-table.ts, abilities.ts). A route with
 * no row fails. Permitted calls must answer the row's success status and show nothing their caller may not read;
 * hidden subjects 404; visible but not allowed 403 (or the row's documented refusal); anonymous 401; and a refused
 * write must change nothing (SQLite's total_changes(), and the repository's refs for git pushes).
 * Besides: git over SSH, the runner API's own credentials, other credentials of one user (personal access, OAuth,
 * sudo; revoked and expired tokens), a project with its features off, an archived project, an expired membership,
 * another project's ids through a project's routes, and objects named in bodies.
 *
 * On PostgreSQL (GANTRY_TEST_DATABASE_URL) every cell runs as on SQLite: every room is on the data layer. There
 * "changed nothing" rests on a fingerprint of the tables (see totalChanges).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { onPostgres, startTestServer, type TestServer } from '../helpers/app.js';
import { settleBuildWork } from '../../daemon/services/ci/builds.js';
import { ABILITIES, ARCHIVED_ABILITIES, expectedFor, FEATURE_ABILITIES, perVisibility, type Ability } from './abilities.js';
import { CROSS_CASES, RUNNER_REQUESTS, SSH_ROWS } from './more-cells.js';
import { POLICY_TABLE, type Cell, type Row } from './policy-table.js';
import { refExists, sshGit, sshInput, startSsh, type SshCaller, type SshSetup } from './ssh-cells.js';
import { routeKeys, unmatchedRoutes } from './routes.js';
import { buildWorld, callerUser, CALLERS, uniq, VISIBILITIES, type Caller, type ProjectWorld, type Visibility, type World } from './world.js';

let s: TestServer;
let w: World;
let routes: string[] = [];
let ssh: SshSetup | undefined;
beforeAll(async () => {
  // the blocked user's refused git credentials count as failed sign-ins: no throttle in the matrix
  s = await startTestServer({ signinMaxFailures: '1000000', sshPort: '0' });
  w = await buildWorld(s);
  routes = await routeKeys(s.app);
  ssh = await startSsh(w);
}, 120_000);
afterAll(async () => {
  await ssh?.server.close();
  await s?.close();
});

const DEFAULT_OK: Record<Row['method'], number[]> = { GET: [200], POST: [201], PUT: [200], DELETE: [200], PATCH: [202] };

/** A path parameter from the cell's world, by name and place. */
function defaultParam(name: string, row: Row, c: Cell): string | number {
  const path = row.path;
  const issues = path.includes('/issues/{issue_id}');
  const onNote = path.includes('/notes/{note_id}/award_emoji');
  const [namespace, project] = c.p.path.split('/') as [string, string];
  const upload = c.p.uploadUrl.split('/');
  switch (name) {
    case 'id':
      if (path.startsWith('/api/v3/groups')) return c.groupId;
      if (path.startsWith('/api/v3/users')) return c.w.cast.owner.id;
      if (path.startsWith('/api/v3/runners')) return c.p.runnerId;
      if (path.startsWith('/api/v3/keys')) return c.w.ownerKeyId;
      return c.p.id;
    case 'issue_id': return c.p.issueId;
    case 'merge_request_id': return c.p.mergeRequestId;
    case 'version_id': return c.p.mrVersionId;
    case 'note_id': return issues ? c.p.issueNoteId : c.p.mrNoteId;
    case 'award_id': return onNote ? (issues ? c.p.issueNoteAwardId : c.p.mrNoteAwardId) : (issues ? c.p.issueAwardId : c.p.mrAwardId);
    case 'label_id': return 'bug';
    case 'milestone_id': return c.p.milestoneId;
    case 'hook_id': return c.p.hookId;
    case 'key_id': return c.p.deployKeyId;
    case 'key': return 'SECRET';
    case 'token': return c.p.triggerToken;
    case 'build_id': return c.p.buildId;
    case 'pipeline_id': return c.p.pipelineId;
    case 'sha': return c.p.sha;
    case 'token_id': return c.w.ownerTokenId;
    case 'group_id': return c.w.shareGroupId;
    case 'runner_id': return c.p.runnerId;
    case 'user_id': return c.w.spareUserId;
    case 'project_id': return c.w.moveTargetId;
    case '*': return path.includes('/tags/') ? (row.method === 'POST' ? 'v1/release' : 'v1') : 'feature';
    case 'namespace': return namespace;
    case 'project': return path.includes('/uploads/') ? project : `${project}.git`;
    case 'secret': return upload[upload.length - 2]!;
    case 'filename': return upload[upload.length - 1]!;
    default: throw new Error(`no value for {${name}} in ${row.method} ${row.path}: give the row params or fresh`);
  }
}

/** The URL of a cell: path parameters filled in (`{x}` and `:x` forms), plus the query. */
function cellUrl(row: Row, c: Cell): string {
  const given = { ...row.params?.(c), ...c.f };
  const path = row.path.replace(/\{([^}]+)\}|:(\w+)/g, (_m, a?: string, b?: string) => {
    const name = (a ?? b)!;
    const v = String(name in given ? given[name] : defaultParam(name, row, c));
    return name === '*' ? v : encodeURIComponent(v);
  });
  const q = new URLSearchParams(row.query?.(c) ?? {}).toString();
  return q ? `${path}?${q}` : path;
}

/** The refs of a project's repository (to prove a refused push changed none), read from its files: no git process. */
function refsOf(projectId: number): string {
  const dir = `${s.ctx.paths.repositories}/${projectId}.git`;
  const loose: string[] = [];
  const walk = (rel: string) => {
    for (const e of readdirSync(`${dir}/${rel}`, { withFileTypes: true })) {
      if (e.isDirectory()) walk(`${rel}/${e.name}`);
      else loose.push(`${rel}/${e.name} ${readFileSync(`${dir}/${rel}/${e.name}`, 'utf8').trim()}`);
    }
  };
  walk('refs');
  const packed = existsSync(`${dir}/packed-refs`) ? readFileSync(`${dir}/packed-refs`, 'utf8') : '';
  return `${loose.sort().join('\n')}\n${packed}`;
}

/** Text that only some callers may ever read, and who (4.2; the Project entity's runners_token; decisions.md). */
const SECRETS: { text: string; readers: string[] }[] = [
  { text: 'A secret', readers: ['reporter', 'developer', 'master', 'owner', 'admin'] }, // confidential issue title
  { text: "the guest's secret", readers: ['guest', 'reporter', 'developer', 'master', 'owner', 'admin'] },
  { text: 'mx-s3cret-value', readers: ['master', 'owner', 'admin'] }, // a secret variable's value (admin_build)
  { text: '"runners_token"', readers: ['master', 'owner', 'admin'] }, // Project.runners_token (admin_project)
  { text: 'hooks.invalid', readers: ['master', 'owner', 'admin'] }, // project hook URLs (admin_project)
  { text: '"private_token"', readers: [] }, // shown by POST /session only (decisions.md GET /user private_token)
  // projects and groups one cannot see do not show in lists (4.4): the private ones' group and path, the hidden ones
  { text: 'mxprivate', readers: ['guest', 'reporter', 'developer', 'master', 'owner', 'admin'] },
  // (the hidden group's name may show in a project's shared_with_groups once an admin shared it: 8.x lists every link)
  { text: 'mx-hidden', readers: ['admin'] },
  // a private snippet of the internal and public projects: their members and admins only
  { text: 'mx-snippet-secret', readers: ['guest', 'reporter', 'developer', 'master', 'owner', 'admin'] },
  { text: 'mxowner/mx-10', readers: ['nonMember', 'guest', 'reporter', 'developer', 'master', 'owner', 'admin'] },
];

/** PostgreSQL: a fingerprint of every table of the test's own database (its row count and newest row version). */
let fingerprintText: string | undefined;
/**
 * Something that moves with every write: SQLite's total_changes() (this connection's writes: the daemon's own); on
 * PostgreSQL, where nothing counts one database's writes at once, each table's row count and highest xmin (an insert
 * or update gives its row the writing transaction's id, a delete lowers the count).
 */
async function totalChanges(): Promise<string | number> {
  if (!onPostgres) return s.ctx.data.sqlite!.totalChanges();
  if (!fingerprintText) {
    // sign_in_failures left out: a refused credential counts as a failed sign-in, which SQLite keeps in memory and
    // PostgreSQL in that table (shared by the daemons); it is not a change the refused request made to the world
    const tables = await s.ctx.data.all<{ t: string }>(
      `SELECT tablename AS t FROM pg_tables WHERE schemaname = current_schema() AND tablename <> 'sign_in_failures' ORDER BY tablename`,
    );
    fingerprintText = tables.map(({ t }) => `SELECT '${t}' AS t, COUNT(*) AS n, MAX(xmin::text::bigint) AS x FROM "${t}"`).join(' UNION ALL ');
  }
  return JSON.stringify(await s.ctx.data.all(fingerprintText));
}

interface Outcome { line: string | null }

/** Run one cell; a mismatch comes back as one summary line. */
async function runCell(row: Row, c: Cell, override?: number[], auth?: Record<string, string>): Promise<Outcome> {
  const rule = ABILITIES[row.ability];
  const expected = override ?? expectedFor(rule, c.caller, c.vis, { confidential: row.confidential, also: row.also });
  // only a permitted call consumes its subject: refused ones name the world's objects (they must change nothing)
  c.f = expected === 'ok' ? (await row.fresh?.(c)) ?? {} : row.standIn?.(c) ?? {};
  const user = callerUser(c.w, c.caller);
  const headers: Record<string, string> = {};
  let url = cellUrl(row, c);
  if (auth) {
    Object.assign(headers, auth);
  } else if (rule.kind === 'git') {
    if (user) headers.authorization = `Basic ${Buffer.from(`${user.username}:${user.token}`).toString('base64')}`;
  } else if (user) {
    headers['private-token'] = user.token;
    // the runner API takes its credential as `token`: a user's token must never pass for one
    if (rule.kind === 'ci') url += `${url.includes('?') ? '&' : '?'}token=${encodeURIComponent(user.token)}`;
  }
  let payload: string | Buffer | undefined;
  const raw = row.raw?.(c);
  if (raw) {
    payload = raw.payload;
    headers['content-type'] = raw.contentType;
  } else if (row.body) {
    payload = JSON.stringify(row.body(c));
    headers['content-type'] = 'application/json';
  }
  // only a refused write must change nothing: reads are not checked (on PostgreSQL the fingerprint is a query), and a
  // permitted write changes what it may
  const checked = expected !== 'ok' && row.method !== 'GET';
  const gitWrite = checked && rule.kind === 'git' && row.method === 'POST';
  const refsBefore = gitWrite ? refsOf(c.p.id) : '';
  const before = checked ? await totalChanges() : 0;
  const res = await s.app.inject({ method: row.method, url, headers, ...(payload !== undefined ? { payload } : {}) });
  const changed = (checked && (await totalChanges()) !== before) || (gitWrite && refsOf(c.p.id) !== refsBefore);
  // a permitted build or pipeline change finishes its work after the answer: let it end before the next cell counts
  if (expected === 'ok' && row.method !== 'GET') await settleBuildWork(s.ctx);
  const okStatuses = row.ok ?? DEFAULT_OK[row.method];
  const subject = c.p === c.w.featuresOff ? 'public, features off' : ['private', '', 'internal', '', 'public'][c.vis / 5];
  const label = `${row.method} ${row.path}${row.variant ? ` [${row.variant}]` : ''} as ${auth ? `${c.caller} (${Object.keys(auth).join('+')})` : c.caller} on ${subject}`;
  const got = `${res.statusCode} ${res.body.slice(0, 100).replace(/\s+/g, ' ')}`;
  if (expected === 'ok') {
    if (!okStatuses.includes(res.statusCode)) return { line: `${label}: expected ${okStatuses.join('|')}, got ${got}` };
    // what a caller may read must not carry what they may not (a confidential issue in a list or an event, a secret...)
    const leaked = SECRETS.filter((x) => !x.readers.includes(c.caller) && res.body.includes(x.text));
    // (public answers are documents about the API, e.g. the OpenAPI schema naming every field)
    if (!row.confidential && !row.ownSubject && rule.kind !== 'public' && leaked.length) return { line: `${label}: the answer shows ${leaked[0]!.text}` };
    return { line: null };
  }
  const refusals = Array.isArray(expected) ? expected : [expected];
  if (!refusals.includes(res.statusCode)) return { line: `${label}: expected ${refusals.join('|')}, got ${got}` };
  if (changed) return { line: `${label}: refused with ${res.statusCode} but changed state` };
  return { line: null };
}

/** Run `fn` over `items`, `size` at a time. */
async function inBatches<T>(items: T[], size: number, fn: (item: T) => Promise<void>): Promise<void> {
  for (let i = 0; i < items.length; i += size) await Promise.all(items.slice(i, i + size).map(fn));
}

/** Run `fn` over `items` one after another. */
async function sequential<T, R>(items: T[], fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = [];
  for (const item of items) out.push(await fn(item));
  return out;
}

describe('authorization matrix', () => {
  it.runIf(onPostgres)('takes a fingerprint on PostgreSQL that moves with a write, not with a read', async () => {
    // the refused cells' "changed nothing" rests on the fingerprint: a write moves it, a read does not
    const before = await totalChanges();
    await s.api('GET', `/projects/${w.moveTargetId}`, s.root);
    expect(await totalChanges()).toBe(before);
    await s.api('PUT', `/projects/${w.moveTargetId}`, s.root, { description: 'fingerprint check' });
    expect(await totalChanges()).not.toBe(before);
  });

  it('has a row for every route of the app', () => {
    const missing = unmatchedRoutes(routes, POLICY_TABLE);
    expect(missing, 'routes without a row in test/authz/policy-table.ts').toEqual([]);
    expect(routes.length).toBeGreaterThan(200);
  });

  it('answers git over SSH as the policy table says, for every key on every project', async () => {
    const failures: string[] = [];
    if (!ssh) throw new Error('no SSH server');
    const callers: SshCaller[] = [...CALLERS, 'deployKey'];
    for (const { service, ability, refPrefix } of SSH_ROWS) {
      const cells = VISIBILITIES.flatMap((vis) => callers.map((caller) => ({ vis, caller })));
      // every key its own connection, a few at once; each push names its own ref, so they cannot meet
      await inBatches(cells, 6, async ({ vis, caller }) => {
        const p = w.projects[vis];
        const ref = `refs/heads/${refPrefix ?? ''}${uniq(w, 'ssh')}`;
        const key = caller === 'deployKey' ? ssh.deployKey : ssh.keys[caller];
        const answer = await sshGit(ssh, key, service, p.path, sshInput(service, p.sha, ref));
        const write = service === 'git-receive-pack';
        // no anonymous SSH (8.x gitlab-shell needs a key); a blocked user's key is refused; a deploy key reads only
        const expected = caller === 'anonymous' || caller === 'blocked' ? 401
          : caller === 'deployKey' ? (write ? 403 : 'ok') : expectedFor(ABILITIES[ability], caller, vis);
        const label = `ssh ${service}${refPrefix ? ` (${refPrefix}*)` : ''} as ${caller} on ${['private', '', 'internal', '', 'public'][vis / 5]}`;
        // a ref refused inside the protocol (git's report, a hook's message on stderr) reads as served or as "not allowed"
        const statuses = expected === 'ok' ? [200] : expected === 200 ? [200, 403] : [expected];
        if (!statuses.includes(answer.status)) failures.push(`${label}: expected ${statuses.join('|')}, got ${answer.status} (${answer.detail})`);
        else if (write && refExists(w, p.id, ref) !== (expected === 'ok')) failures.push(`${label}: the ref was ${expected === 'ok' ? 'not ' : ''}created`);
      });
    }
    if (failures.length) console.error(`authorization matrix, SSH: ${failures.length} cells differ\n${failures.join('\n')}\nserver warnings: ${ssh.warnings.join('\n') || 'none'}`);
    expect(failures).toEqual([]);
  }, 120_000);

  it('treats every credential of the guest as the guest, sudo as its user, and refuses bad credentials', async () => {
    const guest = w.cast.guest;
    const token = async (as: typeof guest, extra: Record<string, unknown> = {}) => (await s.api('POST', '/user/personal_access_tokens', as, { name: uniq(w, 'pat'), ...extra })).body;
    const pat = (await token(guest)).token as string;
    const revoked = await token(s.root);
    await s.api('DELETE', `/user/personal_access_tokens/${revoked.id}`, s.root);
    const expired = await token(s.root);
    await s.ctx.data.run(`UPDATE personal_access_tokens SET expires_at = '2001-01-01' WHERE id = ?`, [expired.id]);
    const oauth = await s.app.inject({
      method: 'POST', url: '/oauth/token', headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ grant_type: 'password', username: guest.username, password: 'password123' }).toString(),
    });
    const bearer = oauth && (oauth.json() as { access_token: string }).access_token;
    // as the guest: reads only (a permitted write would consume its subject); refusals: every route and method
    const asGuest: Record<string, string>[] = [{ 'private-token': pat }, ...(bearer ? [{ authorization: `Bearer ${bearer}` }] : []), { 'private-token': s.root.token, sudo: guest.username }];
    const refused: [Record<string, string>, number][] = [
      [{ 'private-token': guest.token, sudo: w.cast.reporter.username }, 403], // 3.2 item 5: only admins may use sudo
      [{ 'private-token': revoked.token }, 401],
      [{ 'private-token': expired.token }, 401],
      [{ authorization: 'Bearer not-a-token' }, 401],
    ];
    const failures: string[] = [];
    let cells = 0;
    for (const row of POLICY_TABLE) {
      const rule = ABILITIES[row.ability];
      if (!row.path.startsWith('/api/v3') || rule.kind === 'public') continue;
      const c = (): Cell => ({ w, vis: 0, caller: 'guest', p: w.projects[0], groupId: w.groups[0], userId: guest.id, u: uniq(w, 'cred'), f: {} });
      if (row.method === 'GET' && !row.fresh) {
        for (const auth of asGuest) {
          cells++;
          const { line } = await runCell(row, c(), undefined, auth);
          if (line) failures.push(line);
        }
      }
      for (const [auth, status] of refused) {
        cells++;
        const { line } = await runCell(row, c(), [status], auth);
        if (line) failures.push(line);
      }
    }
    if (failures.length) console.error(`authorization matrix, credentials: ${failures.length} of ${cells} cells differ\n${failures.join('\n')}`);
    expect(failures).toEqual([]);
    expect(cells).toBeGreaterThan(onPostgres ? 100 : 1000);
  }, 300_000);

  /** Cells of `rows` on one subject with expectations of their own; a mismatch is one line. */
  async function subjectPass(
    name: string, p: ProjectWorld, vis: Visibility, rows: Row[], callers: readonly Caller[], expected: (caller: Caller, row: Row) => number[],
    auth?: (caller: Caller) => Record<string, string>,
  ) {
    const failures: string[] = [];
    let cells = 0;
    for (const row of rows) {
      for (const caller of callers) {
        cells++;
        const c: Cell = { w, vis, caller, p, groupId: w.groups[vis], userId: callerUser(w, caller)?.id ?? 0, u: uniq(w, 'sub'), f: {} };
        const { line } = await runCell(row, c, expected(caller, row), auth?.(caller));
        if (line) failures.push(line);
      }
    }
    if (failures.length) console.error(`authorization matrix, ${name}: ${failures.length} of ${cells} cells differ\n${failures.join('\n')}`);
    return { failures, cells };
  }

  const projectRows = (abilities: ReadonlySet<Ability>) =>
    POLICY_TABLE.filter((row) => ABILITIES[row.ability].kind === 'project' && abilities.has(row.ability) && !row.visibilities);

  it('refuses what a disabled feature removes, admins included, and changes nothing', async () => {
    // anonymous and blocked callers 401; everyone else sees the public project and is refused: 403 where the route
    // authorizes the ability, 404 where 8.x's finders leave the object out (awards, items looked up in the feature)
    const { failures, cells } = await subjectPass('features off', w.featuresOff, 20, projectRows(FEATURE_ABILITIES), CALLERS,
      (caller) => (caller === 'anonymous' || caller === 'blocked' ? [401] : [403, 404]));
    expect(failures).toEqual([]);
    expect(cells).toBeGreaterThan(onPostgres ? -1 : 500);
  }, 300_000);

  it('refuses pushes and merge request changes on an archived project, admins included, and changes nothing', async () => {
    // reference 4.1: archiving removes push_code, create_merge_request, update_merge_request and admin_merge_request
    const rows = [...projectRows(ARCHIVED_ABILITIES), ...POLICY_TABLE.filter((row) => row.ability === 'git_push')];
    const { failures, cells } = await subjectPass('archived', w.archived, 20, rows, CALLERS, (caller) => (caller === 'anonymous' || caller === 'blocked' ? [401] : [403]));
    expect(failures).toEqual([]);
    expect(cells).toBeGreaterThan(onPostgres ? -1 : 100);
  }, 300_000);

  it('treats an expired membership as none', async () => {
    // members.expires_at in the past (reference 2.3 expires_at): the private project is hidden again, 404 everywhere
    const rows = POLICY_TABLE.filter((row) => row.method === 'GET' && ABILITIES[row.ability].kind === 'project' && !row.fresh);
    const p = w.projects[0];
    const { failures, cells } = await subjectPass('expired membership', p, 0, rows, ['guest'], () => [404], () => ({ 'private-token': w.expired.token }));
    expect(failures).toEqual([]);
    expect(cells).toBeGreaterThan(onPostgres ? 0 : 60);
  }, 300_000);

  it("never reaches another project's objects through a project's routes", async () => {
    // the public project's routes with the ids of the private project's objects (issues, notes, builds, a commit,
    // a hook, a runner, a deploy key...): not found, and nothing changed. The admin passes every permission check,
    // so only the scoping of the lookup is left to refuse; the non-member must not learn anything either
    const foreign = ['issue_id', 'merge_request_id', 'note_id', 'award_id', 'milestone_id', 'hook_id', 'build_id', 'pipeline_id', 'sha', 'runner_id', 'key_id', 'secret'];
    // (enabling a deploy key takes one from another project: that id is meant to be foreign)
    const rows = POLICY_TABLE.filter((row) => ['project', 'web'].includes(ABILITIES[row.ability].kind) && foreign.some((n) => row.path.includes(`{${n}}`) || row.path.includes(`:${n}`))
      && !row.params && !row.visibilities && !row.path.endsWith('/enable'));
    const hybrid: ProjectWorld = { ...w.projects[0], id: w.projects[20].id, path: w.projects[20].path };
    const { failures, cells } = await subjectPass('foreign ids', hybrid, 20, rows.map((row) => ({ ...row, fresh: undefined })), ['admin', 'nonMember'],
      (caller, row) => (caller === 'admin' ? [row.absent ?? 404] : [403, row.absent ?? 404]));
    expect(failures).toEqual([]);
    expect(cells).toBeGreaterThan(onPostgres ? -1 : 150);
  }, 300_000);

  it('refuses objects named in a body that the caller may not use, changing nothing', async () => {
    const failures: string[] = [];
    for (const k of CROSS_CASES) {
      const before = await totalChanges();
      const r = await s.api(k.method, k.path(w), callerUser(w, k.as), k.body?.(w));
      const changed = (await totalChanges()) !== before;
      if (r.status !== k.status) failures.push(`${k.name} (as ${k.as}): expected ${k.status}, got ${r.status} ${r.text.slice(0, 100)}`);
      else if (k.status >= 300 && changed) failures.push(`${k.name} (as ${k.as}): refused with ${r.status} but changed state`);
      else if (k.check && !k.check(r.body)) failures.push(`${k.name} (as ${k.as}): ${r.text.slice(0, 160)}`);
    }
    expect(failures).toEqual([]);
  });

  it('answers the runner API for the credentials it takes (a runner, registration or build token)', async () => {
    const failures: string[] = [];
    for (const row of POLICY_TABLE.filter((r) => ABILITIES[r.ability].kind === 'ci')) {
      const key = `${row.method} ${row.path}`;
      const make = RUNNER_REQUESTS[key];
      if (!make) {
        failures.push(`${key}: no request with a valid runner credential in RUNNER_REQUESTS`);
        continue;
      }
      const q = await make(w);
      const res = await s.app.inject({
        method: row.method, url: q.url, headers: { ...q.headers, ...(q.contentType ? { 'content-type': q.contentType } : {}) }, ...(q.payload !== undefined ? { payload: q.payload } : {}),
      });
      const ok = row.ok ?? DEFAULT_OK[row.method];
      if (!ok.includes(res.statusCode)) failures.push(`${key} as a runner: expected ${ok.join('|')}, got ${res.statusCode} ${res.body.slice(0, 120)}`);
    }
    expect(failures).toEqual([]);
  });

  it('answers every cell as the policy table says', async () => {
    const failures: string[] = [];
    const timing = new Map<string, number>();
    let cells = 0;
    // MATRIX_ONLY=<text>[,<text>...]: only the rows whose method + path contain one of them (while working on a route)
    const only = process.env.MATRIX_ONLY?.split(',');
    for (const row of POLICY_TABLE) {
      if (only && !only.some((o) => `${row.method} ${row.path}`.includes(o))) continue;
      const rule = ABILITIES[row.ability];
      const started = performance.now();
      const cellsOfRow: Cell[] = [];
      for (const vis of row.visibilities ?? (perVisibility(rule) ? VISIBILITIES : ([0] as const))) {
        for (const caller of CALLERS) {
          cellsOfRow.push({
            w, vis, caller, p: w.projects[vis], groupId: w.groups[vis], userId: callerUser(w, caller)?.id ?? 0, u: uniq(w, `mx${caller.toLowerCase()}`), f: {},
          });
        }
      }
      cells += cellsOfRow.length;
      // reads change nothing and are checked by status only: their cells run together (git reads overlap); writes
      // run one at a time, so that total_changes() before and after belongs to one request
      const outcomes = (row.method === 'GET' || row.readOnly) && !row.fresh
        ? await Promise.all(cellsOfRow.map((c) => runCell(row, c)))
        : await sequential(cellsOfRow, (c) => runCell(row, c));
      for (const { line } of outcomes) if (line) failures.push(line);
      timing.set(`${row.method} ${row.path} ${row.variant ?? ''}`, performance.now() - started);
    }
    if (process.env.MATRIX_PROFILE) {
      console.error([...timing].sort((a, b) => b[1] - a[1]).slice(0, 25).map(([k, ms]) => `${ms.toFixed(0).padStart(6)} ms ${k}`).join('\n'));
    }
    if (failures.length) console.error(`authorization matrix: ${failures.length} of ${cells} cells differ\n${failures.join('\n')}`);
    expect(failures).toEqual([]);
  }, 600_000);
});
