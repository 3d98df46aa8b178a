/**
 * `gantry mr` against a real daemon (HTTP, in this process) and the real git client: create from inside a clone with
 * its defaults (source = current branch, target = default branch, project = the clone's remote, push offered),
 * list/show/update/close/reopen, diff piped (a patch `git apply` takes), commits, checkout (also from a fork),
 * merge (a real merge commit; 405 with cannot_be_merged for a conflict, 406, 409), comments, todos, errors with hints.
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Factory } from '../../cli/client.js';
import { buildProgram, commandWords, run } from '../../cli/main.js';
import { remoteProjectPath } from '../../cli/local-git.js';
import { colourDiff, pagerCommand, unifiedDiff, type Change } from '../../cli/views/diff.js';
import { parseMrIid, titleFromBranch } from '../../cli/commands/merge-request-shared.js';
import { placeProjectArguments } from '../../cli/current-project.js';
import { clientEnv, commitFiles, gitOk, repoUrl, tempDir, workTree } from '../helpers/git.js';
import { fakeIO, ROOT_PASSWORD, startCliFixture, type CliFixture } from './helpers.js';

let f: CliFixture;
let rootToken: string;
let bob: { id: number; token: string };
let project: { id: number; path_with_namespace: string };
const P = 'root/mrs';
const dirs: string[] = [];
/** The clone root works in (remote `origin` with root's credentials in its URL). */
let clone: string;
let rootUrl: string;

/** Call the API (as root unless told). */
async function api(method: string, path: string, body?: unknown, token = rootToken) {
  const res = await fetch(`${f.url}${path.startsWith('/ci/') ? '' : '/api/v3'}${path}`, {
    method, headers: { 'private-token': token, ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

/** git's environment for the CLI's own git calls (no global config, never a prompt). */
const gitEnv = (): Record<string, string> => Object.fromEntries(Object.entries(clientEnv()).filter(([k, v]) => !k.startsWith('GANTRY_') && v !== undefined)) as Record<string, string>;
/** Run the CLI as root in `cwd` (default: a directory that is not a clone). */
const mr = (args: string[], cwd?: string, extraEnv: Record<string, string> = {}) => f.cli(['mr', ...args], { cwd: cwd ?? tempDir('gantry-not-a-clone-'), env: { ...gitEnv(), ...extraEnv } });
/** Run the CLI as bob. */
const asBob = (args: string[], cwd?: string) => mr(args, cwd, { GANTRY_URL: f.url, GANTRY_TOKEN: bob.token });

/** Clone a project with credentials in the remote URL. */
async function cloneOf(path: string, cred = { username: 'root', password: ROOT_PASSWORD }): Promise<string> {
  const dir = tempDir('gantry-mr-clone-');
  dirs.push(dir);
  await gitOk(dir, ['clone', '-q', repoUrl(f.url, path, cred), '.']);
  return dir;
}

/** Commit files on a new branch of a clone (from its current HEAD). */
async function branchWith(dir: string, branch: string, files: Record<string, string>, message: string): Promise<string> {
  await gitOk(dir, ['switch', '-q', '-c', branch]);
  return commitFiles(dir, files, message);
}

beforeAll(async () => {
  f = await startCliFixture();
  const login = await f.cli(['login', '--url', f.url, '--username', 'root', '--password-stdin'], { input: `${ROOT_PASSWORD}\n` });
  expect(login.code, login.stderr).toBe(0);
  rootToken = JSON.parse(readFileSync(join(f.configDir, 'config.json'), 'utf8')).profiles.default.token;
  const created = await api('POST', '/projects', { name: 'mrs' });
  expect(created.status).toBe(201);
  project = created.body;
  const u = await api('POST', '/users', { username: 'bob', email: 'bob@example.com', name: 'Bob', password: 'password123' });
  const session = await api('POST', '/session', { login: 'bob', password: 'password123' });
  bob = { id: u.body.id, token: session.body.private_token };
  expect((await api('POST', `/projects/${project.id}/members`, { user_id: bob.id, access_level: 30 })).status).toBe(201);
  const seed = await workTree();
  dirs.push(seed);
  await commitFiles(seed, { 'README.md': '# mrs\n', 'app.txt': 'line 1\nline 2\nline 3\n' }, 'initial');
  rootUrl = repoUrl(f.url, P, { username: 'root', password: ROOT_PASSWORD });
  await gitOk(seed, ['push', '-q', rootUrl, 'HEAD:master']);
  clone = await cloneOf(P);
  expect((await api('POST', `/projects/${project.id}/issues`, { title: 'Login is broken' })).status).toBe(201);
});

afterAll(async () => {
  await f?.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('pure helpers', () => {
  it('finds the project a remote URL names on the server', () => {
    const server = 'http://127.0.0.1:8080';
    expect(remoteProjectPath('http://root:pw@127.0.0.1:8080/root/app.git', server)).toBe('root/app');
    expect(remoteProjectPath('http://127.0.0.1:8080/group/sub/app', server)).toBe('group/sub/app');
    expect(remoteProjectPath('http://127.0.0.1:9090/root/app.git', server)).toBeNull();
    expect(remoteProjectPath('https://127.0.0.1:8080/root/app.git', server)).toBeNull();
    expect(remoteProjectPath('git@127.0.0.1:root/app.git', server)).toBe('root/app');
    expect(remoteProjectPath('ssh://git@127.0.0.1:2222/root/app.git', server)).toBe('root/app');
    expect(remoteProjectPath('git@github.com:root/app.git', server)).toBeNull();
    expect(remoteProjectPath('http://h.example/gitlab/root/app.git', 'http://h.example/gitlab')).toBe('root/app');
    expect(remoteProjectPath('http://h.example/other/root/app.git', 'http://h.example/gitlab')).toBeNull();
    expect(remoteProjectPath('/srv/repos/app.git', server)).toBeNull();
  });

  it('renders changes as a unified diff, coloured only when asked', () => {
    const changes: Change[] = [
      { old_path: 'a.txt', new_path: 'a.txt', a_mode: '100644', b_mode: '100644', diff: '--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-x\n+y\n', new_file: false, renamed_file: false, deleted_file: false },
      { old_path: 'new.sh', new_path: 'new.sh', a_mode: '0', b_mode: '100755', diff: '@@ -0,0 +1 @@\n+echo hi', new_file: true, renamed_file: false, deleted_file: false },
      { old_path: 'old', new_path: 'moved', a_mode: '100644', b_mode: '100644', diff: '', new_file: false, renamed_file: true, deleted_file: false },
      { old_path: 'big', new_path: 'big', a_mode: '100644', b_mode: '100644', diff: '', new_file: false, renamed_file: false, deleted_file: false, too_large: true },
    ];
    const text = unifiedDiff(changes);
    expect(text).toBe([
      'diff --git a/a.txt b/a.txt', '--- a/a.txt', '+++ b/a.txt', '@@ -1 +1 @@', '-x', '+y',
      'diff --git a/new.sh b/new.sh', 'new file mode 100755', '--- /dev/null', '+++ b/new.sh', '@@ -0,0 +1 @@', '+echo hi',
      'diff --git a/old b/moved', 'rename from old', 'rename to moved',
      'diff --git a/big b/big', '# diff of big too large to show', '',
    ].join('\n'));
    expect(text).not.toContain('\u001b[');
    const colour = colourDiff(text);
    expect(colour).toContain('\u001b[32m+y\u001b[m');
    expect(colour).toContain('\u001b[31m-x\u001b[m');
    expect(colour).toContain('\u001b[1m--- a/a.txt\u001b[m');
    expect(colour).toContain('\u001b[36m@@ -1 +1 @@\u001b[m');
    expect(pagerCommand({})).toBe('less -R');
    expect(pagerCommand({ PAGER: 'more' })).toBe('more');
    expect(pagerCommand({ PAGER: 'more', GANTRY_PAGER: 'cat' })).toBeNull();
  });

  it('the mr noun is listed always but its verbs load only when the command line names it', async () => {
    const factory = new Factory(fakeIO({}));
    const verbs = async (argv: string[]) => (await buildProgram(factory, ['node', 'gantry', ...argv])).commands.find((c) => c.name() === 'mr')!.commands.map((c) => c.name());
    expect(await verbs(['issue', 'list'])).toEqual([]);
    expect(await verbs(['mr', 'list'])).toEqual(expect.arrayContaining(['list', 'show', 'create', 'update', 'close', 'reopen', 'merge', 'diff', 'commits', 'checkout', 'comment', 'todo']));
    expect(await verbs(['help', 'merge-request'])).toContain('merge');
  });

  it('parses merge request numbers, [project] <mr> pairs and default titles', () => {
    expect([parseMrIid('3'), parseMrIid('!3'), parseMrIid('#3')]).toEqual([3, 3, 3]);
    expect(() => parseMrIid('three')).toThrow(/by its number/);
    const count = { declared: 2, requiredAfter: 1 };
    expect(placeProjectArguments(['root/app', '3'], count, undefined)).toEqual({ values: ['root/app', '3'], projectGiven: true });
    expect(placeProjectArguments(['3'], count, undefined)).toEqual({ values: [undefined, '3'], projectGiven: false });
    expect(placeProjectArguments(['3'], count, 'root/app')).toEqual({ values: ['root/app', '3'], projectGiven: false });
    expect(() => placeProjectArguments(['root/app', '3'], count, 'root/app')).toThrow(/given twice/);
    expect(titleFromBranch('fix-login_page')).toBe('Fix login page');
    expect(commandWords(['node', 'gantry', '--url', 'x', 'mr', 'list'])).toEqual(['mr', 'list']);
  });
});

describe('gantry mr create inside a clone', () => {
  it('refuses to propose the default branch itself, and a branch the server lacks without --push (with hints)', async () => {
    const onMaster = await mr(['create'], clone);
    expect(onMaster.code).toBe(2);
    expect(onMaster.stderr).toContain('the source and target branch are both master');
    expect(onMaster.stderr).toMatch(/hint: .*git switch -c/);
    await branchWith(clone, 'fix-login', { 'login.txt': 'works now\n' }, 'Fix the login page\n\nCloses #1');
    const unpushed = await mr(['create'], clone); // not a terminal: no question, no push
    expect(unpushed.code).toBe(1);
    expect(unpushed.stderr).toContain(`gantry: branch fix-login is not on ${P}`);
    expect(unpushed.stderr).toContain('hint: push it first: pass --push, or run `git push -u origin fix-login`');
    expect((await mr(['create', '--no-push'], clone)).code).toBe(1);
    expect((await api('GET', `/projects/${project.id}/merge_requests`)).body).toEqual([]);
  });

  it('pushes with --push and creates fix-login -> master in the clone\'s project, titled from the one commit', async () => {
    const r = await mr(['create', '--push', '--json'], clone);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('Pushing fix-login to origin...');
    expect(r.stderr).toContain(`Created merge request !1 in ${P}: fix-login → master.\n`);
    expect(r.json()).toMatchObject({
      iid: 1, project_id: project.id, source_project_id: project.id, target_project_id: project.id, source_branch: 'fix-login', target_branch: 'master',
      title: 'Fix the login page', description: 'Closes #1', state: 'opened', author: { username: 'root' },
    });
    // the push set the upstream, as `git push -u` does
    expect(await gitOk(clone, ['config', 'branch.fix-login.remote'])).toBe('origin');
    const again = await mr(['create'], clone);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/hint: an open merge request from fix-login into master exists already/);
  });

  it('names the branch for several commits, takes flags, and warns about unpushed commits', async () => {
    await gitOk(clone, ['switch', '-q', 'master']);
    await branchWith(clone, 'add-docs', { 'docs/a.md': 'a\n' }, 'docs a');
    await commitFiles(clone, { 'docs/b.md': 'b\n' }, 'docs b');
    await gitOk(clone, ['push', '-q', 'origin', 'add-docs']);
    await commitFiles(clone, { 'docs/c.md': 'c\n' }, 'docs c (not pushed)');
    const r = await mr(['create', '--no-push', '--label', 'docs', '--assignee', 'bob', '-d', 'More docs', '--json'], clone);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('warning: add-docs has local commits that are not on root/mrs');
    expect(r.json()).toMatchObject({ iid: 2, title: 'Add docs', description: 'More docs', labels: ['docs'], assignee: { username: 'bob' } });
  });

  it('outside a clone needs the project and the branch', async () => {
    const none = await mr(['create']);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('no project given, and this directory is not a clone of a project on this server');
    expect(none.stderr).toContain(`hint: name the project`);
    const noBranch = await mr(['create', P]);
    expect(noBranch.code).toBe(2);
    expect(noBranch.stderr).toContain('give --source-branch');
  });
});

describe('reading and changing merge requests', () => {
  it('lists in the clone and by name, as a table and as JSON', async () => {
    const list = await mr(['list'], clone);
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout.split('\n')[0]).toMatch(/^IID\s+TITLE\s+STATE\s+BRANCHES\s+AUTHOR\s+ASSIGNEE\s+LABELS\s+UPDATED$/);
    expect(list.stdout).toMatch(/^!1\s+Fix the login page\s+opened\s+fix-login → master\s+@root/m);
    expect(list.stdout).toMatch(/^!2\s+Add docs\s+opened\s+add-docs → master\s+@root\s+@bob\s+docs/m);
    const json = await mr(['list', P, '--json', '--per-page', '1', '--all']);
    expect(json.json().map((m: { iid: number }) => m.iid).sort()).toEqual([1, 2]);
    const merged = await mr(['list', P, '--state', 'merged']);
    expect([merged.code, merged.stdout, merged.stderr]).toEqual([0, '', 'No merge requests found.\n']);
    expect((await mr(['list', P, '--state', 'open'])).code).toBe(2);
    const page = await mr(['list', P, '--per-page', '1']);
    expect(page.stderr).toContain('use --all for every page, or --page 2');
  });

  it('shows the merge request with merge status, pipeline and description', async () => {
    const show = await mr(['show', '1'], clone);
    expect(show.code, show.stderr).toBe(0);
    expect(show.stdout).toMatch(/^merge request:\s+!1 Fix the login page$/m);
    expect(show.stdout).toMatch(/^state:\s+opened$/m);
    expect(show.stdout).toMatch(/^source:\s+fix-login$/m);
    expect(show.stdout).toMatch(/^target:\s+master$/m);
    expect(show.stdout).toMatch(/^merge status:\s+(can_be_merged|unchecked)$/m);
    expect(show.stdout).toMatch(/^pipeline:\s+none$/m);
    expect(show.stdout).toMatch(/^comments:\s+0$/m);
    expect(show.stdout).toMatch(/\n\nCloses #1\n\n(No notes\.|Notes \(\d+\):)/);
    const json = (await mr(['show', P, '!1', '--json'])).json();
    expect(json).toMatchObject({ iid: 1, head_pipeline: null });
    const watch = await mr(['show', P, '1', '--watch']);
    expect(watch.code, watch.stderr).toBe(0);
    expect(watch.stderr).toBe('Merge request !1 has no pipeline for its head commit; nothing to watch.\n');
    expect((await mr(['show', P, '1', '--watch', '--json'])).code).toBe(2);
  });

  it('updates, closes and reopens', async () => {
    const u = await mr(['update', P, '2', '--title', 'Add the docs', '--label', 'docs,review', '--assignee', 'none']);
    expect(u.code, u.stderr).toBe(0);
    expect(u.stderr).toBe(`Updated merge request !2 in ${P}.\n`);
    expect(u.stdout).toMatch(/^merge request:\s+!2 Add the docs$/m);
    expect(u.stdout).toMatch(/^assignee:\s+none$/m);
    expect((await mr(['update', P, '2'])).code).toBe(2);
    const c = await mr(['close', '2'], clone);
    expect([c.code, c.stderr]).toEqual([0, `Closed merge request !2 of ${P}.\n`]);
    expect((await mr(['close', P, '2'])).stderr).toBe(`Merge request !2 of ${P} is already closed.\n`);
    const r = await mr(['reopen', P, '2', '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json()).toMatchObject({ state: 'reopened' });
    expect((await mr(['reopen', P, '2'])).stderr).toBe(`Merge request !2 of ${P} is already open.\n`);
  });

  it('prints the diff plainly when piped, as a patch git applies; --color always colours it', async () => {
    const d = await mr(['diff', P, '1']);
    expect(d.code, d.stderr).toBe(0);
    expect(d.stdout).toBe('diff --git a/login.txt b/login.txt\nnew file mode 100644\n--- /dev/null\n+++ b/login.txt\n@@ -0,0 +1 @@\n+works now\n');
    const fresh = await cloneOf(P);
    const patch = join(fresh, '..', `mr1-${Date.now()}.patch`);
    writeFileSync(patch, d.stdout);
    dirs.push(patch);
    await gitOk(fresh, ['apply', '--check', patch]);
    const coloured = await mr(['diff', P, '1', '--color', 'always']);
    expect(coloured.stdout).toContain('\u001b[32m+works now\u001b[m');
    expect((await mr(['diff', P, '1', '--color', 'sometimes'])).code).toBe(2);
    const json = (await mr(['diff', P, '1', '--json'])).json();
    expect(json.changes).toEqual([expect.objectContaining({ new_path: 'login.txt', new_file: true })]);
  });

  it('lists the commits', async () => {
    const c = await mr(['commits', P, '2']);
    expect(c.code, c.stderr).toBe(0);
    expect(c.stdout.split('\n')[0]).toMatch(/^SHA\s+TITLE\s+AUTHOR\s+CREATED$/);
    expect(c.stdout).toMatch(/^[0-9a-f]{8}\s+docs b\s+Test User/m);
    expect(c.stdout).toMatch(/^[0-9a-f]{8}\s+docs a\s+Test User/m);
    expect(c.stdout).not.toContain('not pushed');
  });

  it('comments and adds a todo, saying when nothing changed', async () => {
    const c = await mr(['comment', P, '1', '--body', 'Looks good, @bob?']);
    expect(c.code, c.stderr).toBe(0);
    expect(c.stderr).toMatch(/^Commented on merge request !1 of root\/mrs \(note \d+\)\.\n$/);
    expect((await mr(['show', P, '1'])).stdout).toMatch(/^comments:\s+1$/m);
    expect((await mr(['comment', P, '1'])).code).toBe(2);
    const t = await mr(['todo', P, '1']);
    expect(t.code, t.stderr).toBe(0);
    expect(t.stderr).toMatch(/^Added merge request !1 to your todos \(todo \d+\)\.\n$/);
    expect((await mr(['todo', P, '1'])).stderr).toBe('Merge request !1 is already on your todo list.\n');
    const bobTodos = await f.cli(['todo', 'list', '--json'], { env: { GANTRY_URL: f.url, GANTRY_TOKEN: bob.token } });
    expect(bobTodos.json().some((x: { target_type: string; action_name: string }) => x.target_type === 'MergeRequest' && x.action_name === 'mentioned')).toBe(true);
  });

  it('says what to do for an unknown or malformed merge request', async () => {
    const missing = await mr(['show', P, '99']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain(`gantry: no merge request !99 in ${P}`);
    expect(missing.stderr).toContain(`hint: list them with \`gantry mr list ${P}\``);
    expect((await mr(['show', P, 'abc'])).code).toBe(2);
    const noArgs = await mr(['show']);
    expect(noArgs.code).toBe(2);
    expect(noArgs.stderr).toContain('missing <mr> (merge request number (3 or !3))');
    const noClone = await mr(['show', '1']);
    expect(noClone.code).toBe(2);
    expect(noClone.stderr).toContain('not a clone of a project on this server');
    const noProject = await mr(['list', 'root/nope']);
    expect(noProject.code).toBe(1);
    expect(noProject.stderr).toContain('hint: check the id or path');
  });
});

describe('gantry mr checkout', () => {
  it('fetches the source branch into a local branch that tracks it, and fast-forwards it later', async () => {
    const other = await cloneOf(P);
    const r = await mr(['checkout', '1'], other);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(`Switched to branch fix-login (merge request !1 of ${P}: fix-login → master).`);
    expect(await gitOk(other, ['symbolic-ref', '--short', 'HEAD'])).toBe('fix-login');
    expect(await gitOk(other, ['rev-parse', 'HEAD'])).toBe(await gitOk(clone, ['rev-parse', 'fix-login']));
    expect(await gitOk(other, ['config', 'branch.fix-login.merge'])).toBe('refs/heads/fix-login');
    // a new commit on the source branch: checking out again fast-forwards
    await gitOk(clone, ['switch', '-q', 'fix-login']);
    const next = await commitFiles(clone, { 'login.txt': 'works now, really\n' }, 'Fix it harder');
    await gitOk(clone, ['push', '-q', 'origin', 'fix-login']);
    await gitOk(other, ['switch', '-q', 'master']);
    expect((await mr(['checkout', P, '1', '--branch', 'review-1'], other)).code).toBe(0);
    expect(await gitOk(other, ['symbolic-ref', '--short', 'HEAD'])).toBe('review-1');
    expect(await gitOk(other, ['rev-parse', 'HEAD'])).toBe(next);
    // local commits on top of the merge request are kept
    await commitFiles(other, { 'mine.txt': 'x\n' }, 'local only');
    const ahead = await gitOk(other, ['rev-parse', 'HEAD']);
    expect((await mr(['checkout', P, '1', '--branch', 'review-1'], other)).code).toBe(0);
    expect(await gitOk(other, ['rev-parse', 'HEAD'])).toBe(ahead);
    // diverged from the source branch: refused without --force
    const newest = await commitFiles(clone, { 'login.txt': 'works now, for sure\n' }, 'Fix it once more');
    await gitOk(clone, ['push', '-q', 'origin', 'fix-login']);
    const diverged = await mr(['checkout', P, '1', '--branch', 'review-1'], other);
    expect(diverged.code).toBe(1);
    expect(diverged.stderr).toContain('gantry: your local review-1 has commits that are not in merge request !1');
    expect(diverged.stderr).toContain('hint: keep them on another branch, or pass --force');
    expect(await gitOk(other, ['rev-parse', 'HEAD'])).toBe(ahead);
    expect((await mr(['checkout', P, '1', '--branch', 'review-1', '--force'], other)).code).toBe(0);
    expect(await gitOk(other, ['rev-parse', 'HEAD'])).toBe(newest);
    const outside = await mr(['checkout', P, '1']);
    expect(outside.code).toBe(2);
    expect(outside.stderr).toContain('not inside a git clone');
  });

  it('a fork\'s merge request is proposed to the upstream and checked out from the fork', async () => {
    const fork = await api('POST', `/projects/fork/${project.id}`, undefined, bob.token);
    expect(fork.status, JSON.stringify(fork.body)).toBe(201);
    const bobClone = await cloneOf('bob/mrs', { username: 'bob', password: 'password123' });
    const sha = await branchWith(bobClone, 'bob-feature', { 'bob.txt': 'from the fork\n' }, 'Bob\'s feature');
    // bob, inside his clone of the fork: the target defaults to the upstream project
    const c = await asBob(['create', '--push', '--json'], bobClone);
    expect(c.code, c.stderr).toBe(0);
    expect(c.stderr).toContain(`Created merge request !3 in ${P}: bob-feature → master.`);
    expect(c.json()).toMatchObject({ source_project_id: fork.body.id, target_project_id: project.id, title: 'Bob\'s feature' });
    const show = await mr(['show', P, '3']);
    expect(show.stdout).toMatch(/^source:\s+bob\/mrs:bob-feature$/m);
    // root's clone of the upstream has no remote for the fork: fetched by URL with the API token
    const other = await cloneOf(P);
    const r = await mr(['checkout', '3'], other);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('Fetching bob-feature from bob/mrs...');
    expect(await gitOk(other, ['rev-parse', 'HEAD'])).toBe(sha);
    expect(await gitOk(other, ['config', 'branch.bob-feature.merge'])).toBe('refs/heads/bob-feature');
    expect(await gitOk(other, ['config', 'branch.bob-feature.remote'])).toMatch(/\/bob\/mrs\.git$/);
    expect(await gitOk(other, ['config', '--get-all', 'remote.origin.url'])).not.toContain(rootToken);
  });
});

describe('gantry mr merge', () => {
  it('refuses a stale --sha (409) with a hint, then merges into a real merge commit that closes the issue', async () => {
    const stale = await mr(['merge', P, '1', '--sha', '0123456789abcdef0123456789abcdef01234567']);
    expect(stale.code).toBe(1);
    expect(stale.stderr).toMatch(/hint: someone pushed to fix-login/);
    expect((await mr(['merge', P, '1', '--sha', 'nope'])).code).toBe(2);
    const m = await mr(['merge', '1', '--message', 'Merge the login fix', '--json'], clone);
    expect(m.code, m.stderr).toBe(0);
    expect(m.stderr).toBe(`Merged merge request !1 of ${P}: fix-login into master.\n`);
    expect(m.json()).toMatchObject({ state: 'merged' });
    await gitOk(clone, ['switch', '-q', 'master']);
    await gitOk(clone, ['pull', '-q', '--ff-only']);
    const merges = await gitOk(clone, ['log', '--merges', '--format=%s%x09%P']);
    expect(merges.split('\n')).toHaveLength(1);
    expect(merges).toMatch(/^Merge the login fix\t[0-9a-f]{40} [0-9a-f]{40}$/);
    expect((await api('GET', `/projects/${project.id}/issues?iid=1`)).body[0].state).toBe('closed');
    const again = await mr(['merge', P, '1']);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain(`merge request !1 of ${P} is merged`);
    expect((await mr(['close', P, '1'])).stderr).toContain('is merged; it cannot be closed');
  });

  it('a conflicting merge request answers 405 and shows cannot_be_merged, with what to do', async () => {
    await gitOk(clone, ['switch', '-q', 'master']);
    await branchWith(clone, 'edit-a', { 'app.txt': 'line 1\nchanged on edit-a\nline 3\n' }, 'edit a');
    await gitOk(clone, ['push', '-q', 'origin', 'edit-a']);
    await gitOk(clone, ['switch', '-q', 'master']);
    await branchWith(clone, 'edit-b', { 'app.txt': 'line 1\nchanged on edit-b\nline 3\n' }, 'edit b');
    expect((await mr(['create', '--push'], clone)).code).toBe(0); // !4 edit-b
    await gitOk(clone, ['switch', '-q', 'edit-a']);
    expect((await mr(['create'], clone)).code).toBe(0); // !5 edit-a
    expect((await mr(['merge', P, '4'])).code).toBe(0);
    const conflict = await mr(['merge', P, '5']);
    expect(conflict.code).toBe(1);
    expect(conflict.stderr).toContain(`gantry: merge request !5 of ${P} cannot be merged: Branch cannot be merged (merge status: cannot_be_merged)`);
    expect(conflict.stderr).toContain('hint: edit-a conflicts with master');
    expect((await mr(['show', P, '5'])).stdout).toMatch(/^merge status:\s+cannot_be_merged$/m);
  });

  it('--when-pipeline-succeeds waits for the head pipeline, which show --watch follows to the merge', async () => {
    await gitOk(clone, ['switch', '-q', 'master']);
    await gitOk(clone, ['pull', '-q', '--ff-only']);
    await branchWith(clone, 'with-ci', { '.gitlab-ci.yml': 'test:\n  script: echo ok\n' }, 'Add CI');
    const created = await mr(['create', '--push', '--json'], clone);
    expect(created.code, created.stderr).toBe(0);
    const iid = String(created.json().iid);
    const show = await mr(['show', iid], clone);
    expect(show.stdout).toMatch(/^pipeline:\s+#\d+ pending$/m);
    const m = await mr(['merge', iid, '--when-pipeline-succeeds', '--remove-source-branch'], clone);
    expect(m.code, m.stderr).toBe(0);
    expect(m.stderr).toContain(`Merge request !${iid} of ${P} will be merged when its pipeline succeeds`);
    expect((await mr(['show', iid], clone)).stdout).toMatch(/^merge when pipeline succeeds:\s+yes$/m);

    const watching = mr(['show', iid, '--watch', '--interval', '1'], clone);
    // a runner (the runner API by hand) picks the build and reports success
    const p = await api('GET', `/projects/${project.id}`);
    const reg = await api('POST', '/ci/api/v1/runners/register', { token: p.body.runners_token, description: 'mr runner' });
    expect(reg.status).toBe(201);
    const build = await api('POST', '/ci/api/v1/builds/register', { token: reg.body.token });
    expect(build.status).toBe(201);
    expect((await api('PUT', `/ci/api/v1/builds/${build.body.id}`, { token: build.body.token, state: 'success', trace: 'ok\n' })).status).toBe(200);
    const w = await watching;
    expect(w.code, w.stderr).toBe(0);
    expect(w.stdout).toMatch(/^\d\d:\d\d:\d\d pipeline #\d+ success {2}with-ci @ [0-9a-f]{8}/m);
    expect(w.stdout).toMatch(new RegExp(`Pipeline #\\d+ success; merge request !${iid} is merged\\.\\n$`));
    const merged = (await api('GET', `/projects/${project.id}/merge_requests?iid=${iid}`)).body[0];
    expect(merged.state).toBe('merged');
  });
});

describe('on a terminal', () => {
  /** Run the CLI with stdin (and stderr, stdout as told) taken for a terminal. */
  async function onTerminal(args: string[], opts: { input?: string; stdoutIsTTY?: boolean; env?: Record<string, string> } = {}) {
    const io = fakeIO({ GANTRY_CONFIG_DIR: f.configDir, ...gitEnv(), ...opts.env }, opts.input ?? '');
    Object.assign(io, { stdinIsTTY: true, stderrIsTTY: true, stdoutIsTTY: opts.stdoutIsTTY ?? false, cwd: clone });
    const code = await run(['node', 'gantry', 'mr', ...args], io);
    return { code, stdout: io.stdout, stderr: io.stderr };
  }

  it('mr create asks before pushing a branch the server lacks', async () => {
    await gitOk(clone, ['switch', '-q', 'master']);
    await branchWith(clone, 'asked', { 'asked.txt': 'y\n' }, 'Asked first');
    const no = await onTerminal(['create'], { input: 'n\n' });
    expect(no.code).toBe(1);
    expect(no.stderr).toContain(`gantry: branch asked is not on ${P}`);
    const yes = await onTerminal(['create', '--json'], { input: 'y\n' });
    expect(yes.code, yes.stderr).toBe(0);
    expect(yes.stderr).toContain('Pushing asked to origin...');
    expect(JSON.parse(yes.stdout)).toMatchObject({ source_branch: 'asked', title: 'Asked first' });
  });

  it('mr diff colours the diff and shows it through the pager (LESS=FRX unless set)', async () => {
    const out = join(tempDir('gantry-pager-'), 'paged');
    dirs.push(out);
    const r = await onTerminal(['diff', P, '2'], {
      stdoutIsTTY: true, env: { GANTRY_PAGER: `printf '%s\\n' "$LESS" > '${out}.less'; cat > '${out}'` },
    });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe(''); // all of it went to the pager
    expect(readFileSync(`${out}.less`, 'utf8')).toBe('FRX\n');
    const paged = readFileSync(out, 'utf8');
    expect(paged).toContain('\u001b[1mdiff --git a/docs/a.md b/docs/a.md\u001b[m');
    expect(paged).toContain('\u001b[32m+a\u001b[m');
    const plain = await onTerminal(['diff', P, '2', '--no-pager', '--color', 'never'], { stdoutIsTTY: true, env: { GANTRY_PAGER: `cat > '${out}.unused'` } });
    expect(plain.stdout).toContain('diff --git a/docs/a.md b/docs/a.md\n');
    const missing = await onTerminal(['diff', P, '2'], { stdoutIsTTY: true, env: { GANTRY_PAGER: 'no-such-pager-here' } });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('hint: set GANTRY_PAGER or PAGER');
  });
});
