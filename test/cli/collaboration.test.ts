/** `gantry issue|label|milestone|todo` against a real daemon (HTTP, in this process): tables, --json, --all, exit codes, hints. */
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commandWords, run } from '../../cli/main.js';
import { cleanEditorText } from '../../cli/editor.js';
import { fakeIO, ROOT_PASSWORD, startCliFixture, type CliFixture } from './helpers.js';

let f: CliFixture;
let rootToken: string;
let bob: { id: number; token: string };
const P = 'root/collab';
const tmp = mkdtempSync(join(tmpdir(), 'gantry-cli-collab-'));

/** Call the API (as root unless told) for fixtures the CLI does not make. */
async function rootApi(method: string, path: string, body?: unknown, token = rootToken) {
  const res = await fetch(`${f.url}/api/v3${path}`, {
    method, headers: { 'private-token': token, ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}
/** Run the CLI as bob (by token in the environment). */
const asBob = (args: string[]) => f.cli(args, { env: { GANTRY_URL: f.url, GANTRY_TOKEN: bob.token } });

beforeAll(async () => {
  f = await startCliFixture();
  const login = await f.cli(['login', '--url', f.url, '--username', 'root', '--password-stdin'], { input: `${ROOT_PASSWORD}\n` });
  expect(login.code, login.stderr).toBe(0);
  rootToken = JSON.parse(readFileSync(join(f.configDir, 'config.json'), 'utf8')).profiles.default.token;
  expect((await f.cli(['project', 'create', 'collab'])).code).toBe(0);
  expect((await f.cli(['project', 'create', 'elsewhere'])).code).toBe(0);
  const created = await rootApi('POST', '/users', { username: 'bob', email: 'bob@example.com', name: 'Bob', password: 'password123' });
  const session = await rootApi('POST', '/session', { login: 'bob', password: 'password123' });
  bob = { id: created.body.id, token: session.body.private_token };
  const project = await rootApi('GET', `/projects/${encodeURIComponent(P)}`);
  expect((await rootApi('POST', `/projects/${project.body.id}/members`, { user_id: bob.id, access_level: 30 })).status).toBe(201);
});
afterAll(async () => {
  await f?.close();
  rmSync(tmp, { recursive: true, force: true });
});

describe('gantry label', () => {
  it('creates (with or without #), lists, updates and deletes', async () => {
    const c = await f.cli(['label', 'create', P, 'bug', '--color', '#d9534f', '--description', 'Broken']);
    expect(c.code, c.stderr).toBe(0);
    expect(c.stderr).toBe(`Created label bug in ${P}.\n`);
    expect(c.stdout).toMatch(/^color:\s+#d9534f$/m);
    expect((await f.cli(['label', 'create', P, 'ui', '--color', '5cb85c'])).code).toBe(0);
    const list = await f.cli(['label', 'list', P]);
    expect(list.stdout.split('\n')[0]).toMatch(/^NAME\s+COLOR\s+OPEN ISSUES/);
    expect(list.stdout).toMatch(/^bug\s+#d9534f\s+0\s+0/m);
    const json = await f.cli(['label', 'list', P, '--json']);
    expect(json.json().map((l: { name: string }) => l.name).sort()).toEqual(['bug', 'ui']);
    const u = await f.cli(['label', 'update', P, 'ui', '--new-name', 'frontend', '--color', '#0000ff', '--json']);
    expect(u.code, u.stderr).toBe(0);
    expect(u.json()).toMatchObject({ name: 'frontend', color: '#0000ff' });
    expect((await f.cli(['label', 'create', P, 'temp', '--color', '#000000'])).code).toBe(0);
    const d = await f.cli(['label', 'delete', P, 'temp', '--yes']);
    expect(d.code, d.stderr).toBe(0);
    expect((await f.cli(['label', 'list', P, '--json'])).json().map((l: { name: string }) => l.name)).not.toContain('temp');
  });

  it('usage errors exit 2 before any request; API errors exit 1 with a hint', async () => {
    const bad = await f.cli(['label', 'create', P, 'x', '--color', 'red']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('is not a colour');
    expect((await f.cli(['label', 'create', P, 'x'])).code).toBe(2); // --color is required
    expect((await f.cli(['label', 'update', P, 'bug'])).code).toBe(2);
    const noYes = await f.cli(['label', 'delete', P, 'bug']);
    expect(noYes.code).toBe(2);
    expect(noYes.stderr).toContain('hint: add --yes');
    const dup = await f.cli(['label', 'create', P, 'bug', '--color', '#111111']);
    expect(dup.code).toBe(1);
    expect(dup.stderr).toMatch(/hint: .*another name/);
    const missing = await f.cli(['label', 'delete', P, 'nope', '--yes']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('404');
  });
});

describe('gantry milestone', () => {
  it('creates, lists, shows, closes and activates', async () => {
    const c = await f.cli(['milestone', 'create', P, 'v1.0', '--due-date', '2030-01-31', '--description', 'First']);
    expect(c.code, c.stderr).toBe(0);
    expect(c.stderr).toBe(`Created milestone %1 v1.0 in ${P}.\n`);
    expect(c.stdout).toMatch(/^due date:\s+2030-01-31$/m);
    expect((await f.cli(['milestone', 'create', P, 'v2.0'])).code).toBe(0);
    const list = await f.cli(['milestone', 'list', P]);
    expect(list.stdout).toMatch(/^%1\s+v1\.0\s+active\s+2030-01-31/m);
    const closed = await f.cli(['milestone', 'close', P, 'v2.0']);
    expect(closed.code, closed.stderr).toBe(0);
    expect(closed.stderr).toBe(`Closed milestone v2.0 in ${P}.\n`);
    expect((await f.cli(['milestone', 'close', P, '%2'])).stderr).toBe('Milestone v2.0 is already closed.\n');
    expect((await f.cli(['milestone', 'list', P, '--state', 'closed', '--json'])).json().map((m: { title: string }) => m.title)).toEqual(['v2.0']);
    expect((await f.cli(['milestone', 'activate', P, '2'])).stderr).toBe(`Activated milestone v2.0 in ${P}.\n`);
    const show = await f.cli(['milestone', 'show', P, 'v1.0']);
    expect(show.code, show.stderr).toBe(0);
    expect(show.stdout).toMatch(/^milestone:\s+%1 v1\.0$/m);
    expect(show.stdout).toMatch(/^issues:\s+0 \(0 open, 0 closed\)$/m);
  });

  it('says what to do for an unknown milestone or a bad date', async () => {
    const r = await f.cli(['milestone', 'show', P, 'v9']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('no milestone "v9"');
    expect(r.stderr).toContain(`gantry milestone list ${P}`);
    expect((await f.cli(['milestone', 'create', P, 'x', '--due-date', 'soon'])).code).toBe(2);
    expect((await f.cli(['milestone', 'list', P, '--state', 'open'])).code).toBe(2);
  });
});

describe('gantry issue', () => {
  it('creates with labels, assignee, milestone and a description from a file', async () => {
    const file = join(tmp, 'desc.md');
    writeFileSync(file, 'Steps:\n1. save\n');
    const r = await f.cli(['issue', 'create', P, '--title', 'Crash on save', '--label', 'bug', '--label', 'frontend,new-one', '--assignee', 'bob',
      '--milestone', 'v1.0', '--description-file', file, '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toBe(`Created issue #1 in ${P}.\n`);
    expect(r.json()).toMatchObject({
      iid: 1, title: 'Crash on save', description: 'Steps:\n1. save\n', state: 'opened', assignee: { username: 'bob' }, milestone: { title: 'v1.0' },
    });
    expect(r.json().labels.sort()).toEqual(['bug', 'frontend', 'new-one']);
    const plain = await f.cli(['issue', 'create', P, '--title', 'Second', '-d', 'plain text']);
    expect(plain.code, plain.stderr).toBe(0);
    expect(plain.stdout).toMatch(/^issue:\s+#2 Second$/m);
    expect(plain.stdout).toMatch(/^assignee:\s+none$/m);
  });

  it('refuses a missing title, an unknown user or milestone with a hint; stdin is never waited for', async () => {
    const noTitle = await f.cli(['issue', 'create', P]);
    expect(noTitle.code).toBe(2);
    expect(noTitle.stderr).toContain('hint: pass --title');
    const who = await f.cli(['issue', 'create', P, '--title', 'x', '--assignee', 'nobody']);
    expect(who.code).toBe(1);
    expect(who.stderr).toContain('no user "nobody"');
    const ms = await f.cli(['issue', 'create', P, '--title', 'x', '--milestone', 'v9']);
    expect(ms.code).toBe(1);
    expect((await rootApi('GET', `/projects/${encodeURIComponent(P)}/issues`)).body).toHaveLength(2);
  });

  it('lists a project\'s issues as a table, filtered, as JSON, and every page with --all', async () => {
    const list = await f.cli(['issue', 'list', P]);
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout.split('\n')[0]).toMatch(/^IID\s+TITLE\s+STATE\s+LABELS\s+ASSIGNEE\s+MILESTONE\s+UPDATED$/);
    expect(list.stdout).toMatch(/^#1\s+Crash on save\s+opened\s+bug, frontend, new-one\s+@bob\s+v1\.0/m);
    const bugs = await f.cli(['issue', 'list', P, '--label', 'bug', '--json']);
    expect(bugs.json().map((i: { iid: number }) => i.iid)).toEqual([1]);
    const page = await f.cli(['issue', 'list', P, '--per-page', '1']);
    expect(page.stderr).toContain('use --all for every page, or --page 2');
    const all = await f.cli(['issue', 'list', P, '--per-page', '1', '--all', '--json']);
    expect(all.json()).toHaveLength(2);
    const mine = await f.cli(['issue', 'list']);
    expect(mine.stdout.split('\n')[0]).toMatch(/^PROJECT\s+IID/);
    expect(mine.stdout).toMatch(new RegExp(`^${P}\\s+#2\\s+Second`, 'm'));
    expect((await f.cli(['issue', 'list', P, '--state', 'shut'])).code).toBe(2);
  });

  it('updates, closes and reopens', async () => {
    const u = await f.cli(['issue', 'update', P, '#2', '--title', 'Second, renamed', '--label', 'frontend', '--due-date', '2030-02-01']);
    expect(u.code, u.stderr).toBe(0);
    expect(u.stdout).toMatch(/^labels:\s+frontend$/m);
    expect(u.stdout).toMatch(/^due date:\s+2030-02-01$/m);
    expect((await f.cli(['issue', 'update', P, '2'])).code).toBe(2);
    expect((await f.cli(['issue', 'update', P, 'two', '--title', 'x'])).code).toBe(2);
    const unassign = await f.cli(['issue', 'update', P, '1', '--assignee', 'none', '--milestone', 'none', '--json']);
    expect(unassign.json()).toMatchObject({ assignee: null, milestone: null });
    const c = await f.cli(['issue', 'close', P, '2']);
    expect(c.code, c.stderr).toBe(0);
    expect(c.stderr).toBe(`Closed issue #2 in ${P}.\n`);
    expect((await f.cli(['issue', 'close', P, '2'])).stderr).toBe(`Issue #2 in ${P} is already closed.\n`);
    expect((await f.cli(['issue', 'list', P, '--state', 'closed', '--json'])).json().map((i: { iid: number }) => i.iid)).toEqual([2]);
    expect((await f.cli(['issue', 'reopen', P, '2', '--json'])).json()).toMatchObject({ state: 'opened' });
    const missing = await f.cli(['issue', 'show', P, '99']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('no issue #99');
    expect(missing.stderr).toContain(`gantry issue list ${P}`);
  });

  it('subscribes, unsubscribes and adds a todo, saying when nothing changed', async () => {
    const s1 = await f.cli(['issue', 'subscribe', P, '2']);
    expect([s1.code, s1.stderr]).toEqual([0, 'You are already subscribed to issue #2.\n']); // the author is subscribed
    expect((await f.cli(['issue', 'unsubscribe', P, '2'])).stderr).toBe('Unsubscribed from issue #2.\n');
    expect((await f.cli(['issue', 'unsubscribe', P, '2'])).stderr).toBe('You were not subscribed to issue #2.\n');
    expect((await f.cli(['issue', 'subscribe', P, '2'])).stderr).toBe('Subscribed to issue #2.\n');
    const t = await f.cli(['issue', 'todo', P, '2']);
    expect(t.code, t.stderr).toBe(0);
    expect(t.stderr).toMatch(/^Added issue #2 to your todos \(todo \d+\)\.\n$/);
    expect((await f.cli(['issue', 'todo', P, '2'])).stderr).toBe('Issue #2 is already on your todo list.\n');
  });

  it('moves an issue to another project', async () => {
    expect((await f.cli(['issue', 'create', P, '--title', 'Wrong place'])).code).toBe(0);
    const m = await f.cli(['issue', 'move', P, '3', 'root/elsewhere', '--json']);
    expect(m.code, m.stderr).toBe(0);
    expect(m.stderr).toBe(`Moved issue #3 of ${P} to root/elsewhere as #1.\n`);
    expect(m.json()).toMatchObject({ iid: 1, title: 'Wrong place' });
    const same = await f.cli(['issue', 'move', 'root/elsewhere', '1', 'root/elsewhere']);
    expect(same.code).toBe(1);
  });

  it('deletes only with --yes off a terminal', async () => {
    expect((await f.cli(['issue', 'create', 'root/elsewhere', '--title', 'Doomed'])).code).toBe(0);
    expect((await f.cli(['issue', 'delete', 'root/elsewhere', '2'])).code).toBe(2);
    const d = await f.cli(['issue', 'delete', 'root/elsewhere', '2', '--yes']);
    expect(d.code, d.stderr).toBe(0);
    expect(d.stderr).toBe('Deleted issue #2 of root/elsewhere.\n');
    expect((await f.cli(['issue', 'show', 'root/elsewhere', '2'])).code).toBe(1);
  });
});

describe('comments, mentions and todos', () => {
  it('a comment mentioning bob gives bob a todo; show prints the notes and award counts', async () => {
    const c = await f.cli(['issue', 'comment', P, '2', '--body', 'Could you look, @bob? `@root` is code.']);
    expect(c.code, c.stderr).toBe(0);
    expect(c.stderr).toMatch(/^Commented on issue #2 of root\/collab \(note \d+\)\.\n$/);
    const issue = (await rootApi('GET', `/projects/${encodeURIComponent(P)}/issues?iid=2`)).body[0];
    expect((await rootApi('POST', `/projects/${issue.project_id}/issues/${issue.id}/award_emoji`, { name: 'heart' }, bob.token)).status).toBe(201);
    expect((await rootApi('POST', `/projects/${issue.project_id}/issues/${issue.id}/award_emoji`, { name: 'thumbsup' }, bob.token)).status).toBe(201);
    const show = await f.cli(['issue', 'show', P, '2']);
    expect(show.code, show.stderr).toBe(0);
    expect(show.stdout).toMatch(/^issue:\s+#2 Second, renamed$/m);
    expect(show.stdout).toMatch(/^votes:\s+\+1 -0$/m);
    expect(show.stdout).toMatch(/^awards:\s+heart 1, thumbsup 1$/m);
    expect(show.stdout).toMatch(/^Notes \(\d+\):$/m);
    expect(show.stdout).toContain('  Could you look, @bob? `@root` is code.');
    expect(show.stdout).toMatch(/@root · .* · system\n {2}Status changed to closed/);
    const json = (await f.cli(['issue', 'show', P, '2', '--json'])).json();
    expect(json.notes.some((n: { body: string }) => n.body.includes('@bob'))).toBe(true);
    expect(json.award_emoji.map((a: { name: string }) => a.name).sort()).toEqual(['heart', 'thumbsup']);

    const todos = await asBob(['todo', 'list']);
    expect(todos.code, todos.stderr).toBe(0);
    expect(todos.stdout).toMatch(/^\d+\s+root\/collab\s+#2\s+mentioned\s+@root\s+Second, renamed\s+Could you look/m);
    // bob was assigned #1 when it was filed (unassigning later leaves the todo, as 8.x)
    expect((await asBob(['todo', 'list', '--action', 'assigned', '--json'])).json().map((t: { target: { iid: number } }) => t.target.iid)).toEqual([1]);
    expect((await asBob(['todo', 'list', '--project', P, '--author', 'root', '--type', 'issue', '--json'])).json()).toHaveLength(2);
    const hidden = await asBob(['todo', 'list', '--project', 'root/elsewhere']);
    expect(hidden.code).toBe(1); // bob cannot see that project
    expect(hidden.stderr).toContain('hint: check the id or path');
    // root's own marked todo on #2 became done when root commented on it (8.x)
    expect((await f.cli(['todo', 'list', '--json'])).json()).toEqual([]);
    expect((await f.cli(['todo', 'list', '--state', 'done', '--json'])).json().map((t: { action_name: string }) => t.action_name)).toEqual(['marked']);
  });

  it('a comment from stdin (--body-file -); an empty comment is refused', async () => {
    const r = await f.cli(['issue', 'comment', P, '1', '--body-file', '-'], { input: 'from stdin\n' });
    expect(r.code, r.stderr).toBe(0);
    expect((await f.cli(['issue', 'comment', P, '1'])).code).toBe(2);
  });

  it('todo done ID and --all; usage and 404 errors', async () => {
    const [todo] = (await asBob(['todo', 'list', '--json'])).json();
    const d = await asBob(['todo', 'done', String(todo.id)]);
    expect(d.code, d.stderr).toBe(0);
    expect(d.stderr).toBe(`Marked todo ${todo.id} done (issue #2 of root/collab).\n`);
    expect((await asBob(['todo', 'list', '--state', 'done', '--json'])).json().map((t: { id: number }) => t.id)).toContain(todo.id);
    const theirs = await f.cli(['todo', 'done', String(todo.id)]);
    expect(theirs.code).toBe(1);
    expect(theirs.stderr).toContain('404');
    expect((await f.cli(['issue', 'todo', P, '1'])).code).toBe(0);
    const all = await f.cli(['todo', 'done', '--all']);
    expect(all.stderr).toBe('Marked 1 todo done.\n');
    expect((await f.cli(['todo', 'list'])).stderr).toBe('No pending todos found.\n');
    expect((await f.cli(['todo', 'done'])).code).toBe(2);
    expect((await f.cli(['todo', 'done', '1', '--all'])).code).toBe(2);
    expect((await f.cli(['todo', 'done', 'x'])).code).toBe(2);
    expect((await f.cli(['todo', 'list', '--action', 'poked'])).code).toBe(2);
  });
});

describe('the editor', () => {
  it('issue create opens $EDITOR for the description on a terminal (as gh does)', async () => {
    const editor = join(tmp, 'fake-editor.sh');
    writeFileSync(editor, '#!/bin/sh\nprintf "Written in the editor\\n\\n#~ dropped\\n" > "$1"\n');
    chmodSync(editor, 0o755);
    const io = Object.assign(fakeIO({ GANTRY_CONFIG_DIR: f.configDir, EDITOR: editor, PATH: process.env.PATH }), { stdinIsTTY: true, stdoutIsTTY: true });
    const code = await run(['node', 'gantry', 'issue', 'create', P, '--title', 'Edited', '--json'], io);
    expect(code, io.stderr).toBe(0);
    expect(JSON.parse(io.stdout)).toMatchObject({ title: 'Edited', description: 'Written in the editor' });
    const failing = Object.assign(fakeIO({ GANTRY_CONFIG_DIR: f.configDir, EDITOR: 'false', PATH: process.env.PATH }), { stdinIsTTY: true, stdoutIsTTY: true });
    expect(await run(['node', 'gantry', 'issue', 'create', P, '--title', 'Never'], failing)).toBe(1);
    expect(failing.stderr).toContain('the editor (false) failed');
  });

  it('drops instruction lines', () => {
    expect(cleanEditorText('\nbody\n#~ hint\n\n')).toBe('body');
  });
});

describe('lazy nouns', () => {
  it('finds the command words past global options and their values', () => {
    expect(commandWords(['node', 'gantry', '--url', 'http://x', '--token', 't', 'issue', 'list', 'root/a'])).toEqual(['issue', 'list']);
    expect(commandWords(['node', 'gantry', '--json', 'help', 'todo'])).toEqual(['help', 'todo']);
    expect(commandWords(['node', 'gantry'])).toEqual([]);
  });

  it('lists the nouns in the help; loads their verbs when named, also after help', async () => {
    const help = await f.cli(['--help']);
    for (const noun of ['issue', 'label', 'milestone', 'todo']) expect(help.stdout).toMatch(new RegExp(`^  ${noun}\\|${noun}s\\b`, 'm'));
    const verbs = await f.cli(['help', 'issue']);
    expect(verbs.stdout).toMatch(/^ {2}comment\|note \[options\] \[project\] <issue>/m);
    expect((await f.cli(['issues', '--help'])).stdout).toContain('subscribe');
    expect((await f.cli(['--url', f.url, 'todo', 'frobnicate'])).code).toBe(2);
  });
});
