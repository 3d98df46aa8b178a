/**
 * Label changes in system notes: the API answers 8.13's stored text, which names labels by id ("Added ~2 label",
 * `to_reference(format: :id)`), and `gantry issue show` / `gantry mr show` print the labels' names instead
 * ("Added ~bug label", `~"two words"` when quotes are needed), with one request for the project's labels.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { notesReferToLabels, withLabelNames, type Note } from '../../cli/commands/collaboration.js';
import { ROOT_PASSWORD, startCliFixture, type CliFixture } from './helpers.js';

let f: CliFixture;
let rootToken: string;
let projectId: number;
const P = 'root/labelled';
const labels: Record<string, number> = {};

async function rootApi(method: string, path: string, body?: unknown) {
  const res = await fetch(`${f.url}/api/v3${path}`, {
    method, headers: { 'private-token': rootToken, ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

beforeAll(async () => {
  f = await startCliFixture();
  const login = await f.cli(['login', '--url', f.url, '--username', 'root', '--password-stdin'], { input: `${ROOT_PASSWORD}\n` });
  expect(login.code, login.stderr).toBe(0);
  rootToken = JSON.parse(readFileSync(join(f.configDir, 'config.json'), 'utf8')).profiles.default.token;
  expect((await f.cli(['project', 'create', 'labelled'])).code).toBe(0);
  projectId = (await rootApi('GET', `/projects/${encodeURIComponent(P)}`)).body.id;
  for (const name of ['bug', 'needs review', 'temp']) {
    const l = await rootApi('POST', `/projects/${projectId}/labels`, { name, color: '#d9534f' });
    expect(l.status).toBe(201);
    labels[name] = l.body.id;
  }
});
afterAll(async () => {
  await f?.close();
});

const note = (body: string, system = true): Note => ({ id: 1, body, author: null, system, created_at: '2026-01-01T00:00:00Z' });

describe('label ids in system notes', () => {
  it('are replaced by names only in system notes, only for labels that exist, quoted when needed', () => {
    const known = [{ id: 1, name: 'bug', color: '#000000', description: null }, { id: 2, name: 'needs review', color: '#000000', description: null }];
    const shown = withLabelNames([
      note('Added ~1 and removed ~2 ~3 labels'),
      note('Added ~1 label'),
      note('Removed ~12 label'),
      note('see ~1 and ~2', false),
    ], known);
    expect(shown.map((n) => n.body)).toEqual([
      'Added ~bug and removed ~"needs review" ~3 labels',
      'Added ~bug label',
      'Removed ~12 label',
      'see ~1 and ~2',
    ]);
    expect(notesReferToLabels([note('Status changed to closed'), note('~1 mentioned', false)])).toBe(false);
    expect(notesReferToLabels([note('Added ~7 label')])).toBe(true);
  });

  it('gantry issue show prints label names; the API keeps 8.13 text (ids)', async () => {
    const issue = (await rootApi('POST', `/projects/${projectId}/issues`, { title: 'Broken save' })).body;
    expect((await rootApi('PUT', `/projects/${projectId}/issues/${issue.id}`, { labels: 'bug,needs review' })).status).toBe(200);
    expect((await rootApi('PUT', `/projects/${projectId}/issues/${issue.id}`, { labels: 'temp' })).status).toBe(200);
    expect((await rootApi('POST', `/projects/${projectId}/issues/${issue.id}/notes`, { body: `a person's ~${labels.bug}` })).status).toBe(201);
    const notes = (await rootApi('GET', `/projects/${projectId}/issues/${issue.id}/notes`)).body as Note[];
    const system = notes.filter((n) => n.system).map((n) => n.body).sort();
    expect(system).toEqual([
      `Added ~${labels.bug} ~${labels['needs review']} labels`,
      `Added ~${labels.temp} and removed ~${labels.bug} ~${labels['needs review']} labels`,
    ].sort());

    const show = await f.cli(['issue', 'show', P, String(issue.iid)]);
    expect(show.code, show.stderr).toBe(0);
    expect(show.stdout).toMatch(/· system\n {2}Added ~bug ~"needs review" labels\n/);
    expect(show.stdout).toMatch(/· system\n {2}Added ~temp and removed ~bug ~"needs review" labels\n/);
    expect(show.stdout).toContain(`  a person's ~${labels.bug}\n`);
    // --json is the API's answer, ids and all
    const json = (await f.cli(['issue', 'show', P, String(issue.iid), '--json'])).json();
    expect(json.notes.filter((n: Note) => n.system).map((n: Note) => n.body).sort()).toEqual(system);

    // a label that is gone keeps its id
    expect((await rootApi('DELETE', `/projects/${projectId}/labels?name=temp`)).status).toBe(200);
    const after = await f.cli(['issue', 'show', P, String(issue.iid)]);
    expect(after.stdout).toMatch(new RegExp(`· system\\n {2}Added ~${labels.temp} and removed ~bug ~"needs review" labels\\n`));
  });

  it('gantry mr show prints the notes with label names', async () => {
    const file = await rootApi('POST', `/projects/${projectId}/repository/files`, { file_path: 'a.txt', branch_name: 'master', commit_message: 'a', content: 'a\n' });
    expect(file.status).toBe(201);
    expect((await rootApi('POST', `/projects/${projectId}/repository/branches`, { branch_name: 'feature', ref: 'master' })).status).toBe(201);
    expect((await rootApi('POST', `/projects/${projectId}/repository/files`, { file_path: 'b.txt', branch_name: 'feature', commit_message: 'b', content: 'b\n' })).status).toBe(201);
    const mr = (await rootApi('POST', `/projects/${projectId}/merge_requests`, { source_branch: 'feature', target_branch: 'master', title: 'Feature' })).body;
    const upd = await rootApi('PUT', `/projects/${projectId}/merge_requests/${mr.id}`, { labels: 'needs review' });
    expect(upd.status, JSON.stringify(upd.body) + JSON.stringify(mr)).toBe(200);
    const api = (await rootApi('GET', `/projects/${projectId}/merge_requests/${mr.id}/notes`)).body as Note[];
    expect(api.filter((n) => n.system).map((n) => n.body)).toContain(`Added ~${labels['needs review']} label`);

    const show = await f.cli(['mr', 'show', P, String(mr.iid)]);
    expect(show.code, show.stderr).toBe(0);
    expect(show.stdout).toMatch(/^Notes \(\d+\):$/m);
    expect(show.stdout).toMatch(/· system\n {2}Added ~"needs review" label\n/);
  });
});
