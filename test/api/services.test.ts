/**
 * Project services (GitLab 8.13 /projects/:id/services/:slug) with the Slack service: GET, PUT, DELETE with 8.13's
 * entity and answers, every error, and who may (master and up, admins); and the Slack messages an active service posts,
 * received by a real HTTP receiver through the durable outbox, each once, in 8.13's wording and Slack's link format:
 * pushes, issues, merge requests, notes, builds and pipelines, the per-event switches and channels, the "only broken"
 * settings, and nothing after DELETE. On either engine.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer, type TestUser } from '../helpers/app.js';
import { addCastMembers, makeCast, makeProject, type Cast } from '../helpers/fixtures.js';
import { ACTORS, expectedStatus, type Actor } from '../helpers/collaboration.js';
import { buildNamed, drive, pipelinesOf, pushFiles } from '../helpers/ci.js';
import { sleep, startReceiver, waitUntil, type HookReceiver } from '../helpers/hook-receiver.js';
import { startHookDeliveryWorker, type HookDeliveryWorker } from '../../daemon/services/hooks/deliveries.js';
import { slackLinks, slackMessage } from '../../daemon/services/project-services/slack.js';

let s: TestServer;
let alice: TestUser;
let recv: HookReceiver;
let worker: HookDeliveryWorker;

const URL_BASE = 'http://gantry.test';
const ONE_JOB = `
compile:
  stage: build
  script: make
`;

beforeAll(async () => {
  s = await startTestServer();
  alice = await s.user('alice', { projects_limit: 100 });
  recv = await startReceiver();
  // one at a time: the receiver sees the messages in the order they were queued
  worker = startHookDeliveryWorker(s.ctx, { retryBaseMs: 40, maxAttempts: 3, concurrency: 1, log: () => undefined });
});

afterAll(async () => {
  await worker?.stop();
  await recv?.stop();
  await s?.close();
});

/** Wait until no delivery is pending (so every message queued so far has arrived). */
const drained = () => waitUntil(async () => !(await s.ctx.data.get("SELECT id FROM hook_deliveries WHERE status = 'pending' LIMIT 1")), 'the outbox to drain');
const esc = (t: string) => t.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const messages = (path: string): any[] => recv.to(path).map((r) => r.json());

describe('the routes', () => {
  let p: { id: number };
  beforeAll(async () => {
    p = await makeProject(s, alice, 'Routes');
  });

  it('GET shows a service never set up with 8.13 defaults: inactive, every event on, the two "only broken" settings', async () => {
    const r = await s.api('GET', `/projects/${p.id}/services/slack`, alice);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      id: expect.any(Number), title: 'Slack', created_at: expect.any(String), updated_at: expect.any(String), active: false,
      push_events: true, issues_events: true, merge_requests_events: true, tag_push_events: true, note_events: true, build_events: true,
      pipeline_events: true, properties: { notify_only_broken_builds: true, notify_only_broken_pipelines: true },
    });
    // the same row the next time
    expect((await s.api('GET', `/projects/${p.id}/services/slack`, alice)).body.id).toBe(r.body.id);
  });

  it('PUT sets and activates it (answers true), keeping settings not given; event switches and checkboxes as booleans', async () => {
    const put = await s.api('PUT', `/projects/${p.id}/services/slack`, alice, {
      webhook: 'https://hooks.slack.com/services/T/B/x', username: 'gantry', channel: '#dev', notify_only_broken_builds: false, issue_channel: '#issues',
    });
    expect(put.status).toBe(200);
    expect(put.body).toBe(true);
    const again = await s.api('PUT', `/projects/${p.id}/services/slack`, alice, { webhook: 'https://hooks.slack.com/services/T/B/y', push_events: false });
    expect(again.body).toBe(true);
    const r = await s.api('GET', `/projects/${p.id}/services/slack`, alice);
    expect(r.body).toMatchObject({ title: 'Slack', active: true, push_events: false, issues_events: true });
    expect(r.body.properties).toEqual({
      webhook: 'https://hooks.slack.com/services/T/B/y', username: 'gantry', channel: '#dev', notify_only_broken_builds: false,
      notify_only_broken_pipelines: true, issue_channel: '#issues',
    });
    // form-encoded values, as curl -d sends them
    const form = await s.api('PUT', `/projects/${p.id}/services/slack`, alice, 'webhook=https%3A%2F%2Fchat.example%2Fhooks%2Fabc&notify_only_broken_builds=true&push_events=true',
      { 'content-type': 'application/x-www-form-urlencoded' });
    expect(form.status).toBe(200);
    const after = (await s.api('GET', `/projects/${p.id}/services/slack`, alice)).body;
    expect(after).toMatchObject({ push_events: true, properties: { webhook: 'https://chat.example/hooks/abc', notify_only_broken_builds: true } });
  });

  it('PUT without a webhook answers 400 "webhook" not given, a webhook that is not an http(s) URL 400; nothing changes', async () => {
    const before = (await s.api('GET', `/projects/${p.id}/services/slack`, alice)).body;
    for (const body of [{}, { username: 'x' }, { webhook: '' }, { webhook: '   ' }]) {
      const r = await s.api('PUT', `/projects/${p.id}/services/slack`, alice, body);
      expect([body, r.status, r.body]).toEqual([body, 400, { message: '400 (Bad request) "webhook" not given' }]);
    }
    for (const webhook of ['not a url', 'ftp://x.example/y', 'http://']) {
      const r = await s.api('PUT', `/projects/${p.id}/services/slack`, alice, { webhook, username: 'changed' });
      expect([webhook, r.status, r.body]).toEqual([webhook, 400, { message: { webhook: ['is not a valid URL'] } }]);
    }
    const wrongType = await s.api('PUT', `/projects/${p.id}/services/slack`, alice, { webhook: 'https://x.example/h', push_events: 'sometimes' });
    expect(wrongType.status).toBe(400);
    expect(wrongType.body.message).toBeDefined();
    expect((await s.api('GET', `/projects/${p.id}/services/slack`, alice)).body).toEqual(before);
  });

  it('DELETE empties every setting and deactivates it (answers true)', async () => {
    const r = await s.api('DELETE', `/projects/${p.id}/services/slack`, alice);
    expect(r.status).toBe(200);
    expect(r.body).toBe(true);
    const got = (await s.api('GET', `/projects/${p.id}/services/slack`, alice)).body;
    expect(got.active).toBe(false);
    expect(Object.values(got.properties).every((v) => v === null)).toBe(true);
    expect(got.properties).toHaveProperty('webhook', null);
  });

  it('an unknown service or project is 404', async () => {
    for (const m of ['GET', 'PUT', 'DELETE'] as const) {
      const r = await s.api(m, `/projects/${p.id}/services/hipchat`, alice, m === 'PUT' ? { webhook: 'https://x.example/h' } : undefined);
      expect([m, r.status, r.body]).toEqual([m, 404, { message: '404 Service Not Found' }]);
      const gone = await s.api(m, '/projects/999999/services/slack', alice, m === 'PUT' ? { webhook: 'https://x.example/h' } : undefined);
      expect([m, gone.status]).toEqual([m, 404]);
    }
  });
});

describe('who may', () => {
  let cast: Cast;
  const projects: Record<number, number> = {};
  beforeAll(async () => {
    cast = await makeCast(s, 'svc');
    for (const vis of [0, 10, 20]) {
      const r = await s.api('POST', '/projects', cast.owner, { name: `svc-${vis}`, visibility_level: vis });
      projects[vis] = r.body.id;
      await addCastMembers(s.ctx, cast, r.body.id);
    }
  });
  const as = (actor: Actor) => (actor === 'anonymous' ? null : cast[actor as Exclude<Actor, 'anonymous'>]);

  it('masters, owners and admins; others 403 where they see the project, 404 where they do not, anonymous 401; refused calls change nothing', async () => {
    for (const vis of [0, 10, 20]) {
      const id = projects[vis]!;
      for (const actor of ACTORS) {
        const want = expectedStatus(actor, vis, 40, 200);
        const get = await s.api('GET', `/projects/${id}/services/slack`, as(actor));
        const put = await s.api('PUT', `/projects/${id}/services/slack`, as(actor), { webhook: `https://x.example/${actor}` });
        const del = await s.api('DELETE', `/projects/${id}/services/slack`, as(actor));
        expect([vis, actor, get.status, put.status, del.status]).toEqual([vis, actor, want, want, want]);
        if (want !== 200) expect(put.body.message).toEqual(expect.any(String));
      }
      // the last permitted caller (admin) deleted it: no refused PUT activated it
      const final = await s.api('GET', `/projects/${id}/services/slack`, s.root);
      expect(final.body.active).toBe(false);
    }
  });
});

describe('Slack messages', () => {
  it('turns Markdown links into Slack links, inner ones first', () => {
    expect(slackLinks('[[a](http://x/a)] and [b c](https://y/b) [not](ftp://z)')).toBe('[<http://x/a|a>] and <https://y/b|b c> [not](ftp://z)');
  });

  it('words tag pushes, removed branches, commit and merge request comments and merged requests as 8.13 (pure)', () => {
    const web = 'http://g.test/a/p';
    const project = { web_url: web };
    const props = { webhook: 'http://x.test/h' };
    const zero = '0'.repeat(40);
    expect(slackMessage('tag_push', { project, user_name: 'Ann', ref: 'refs/tags/v1', before: zero, after: 'a'.repeat(40) }, props, 'a/p')).toEqual({
      text: `Ann pushed new tag <${web}/commits/v1|v1> to <${web}|a/p>`, attachments: [],
    });
    expect(slackMessage('push', { project, user_name: 'Ann', ref: 'refs/heads/old', before: 'b'.repeat(40), after: zero }, props, 'a/p')).toEqual({
      text: `Ann removed branch old from <${web}|a/p>`, attachments: [],
    });
    const note = (noteable_type: string, extra: Record<string, unknown>) => slackMessage('note', {
      project, user: { username: 'ann' }, object_attributes: { note: 'LGTM', url: `${web}/x#note_1`, noteable_type }, ...extra,
    }, props, 'a/p')!.text;
    expect(note('Commit', { commit: { id: 'c'.repeat(40), message: 'Fix it\nbody' } })).toBe(`ann commented on <${web}/x#note_1|commit cccccccc> in <${web}|a/p>: *Fix it*`);
    expect(note('MergeRequest', { merge_request: { iid: 4, title: 'Feature' } })).toBe(`ann commented on <${web}/x#note_1|merge request !4> in <${web}|a/p>: *Feature*`);
    expect(slackMessage('merge_request', { project, user: { username: 'ann' }, object_attributes: { iid: 4, state: 'merged', title: 'Feature', action: 'merge' } }, props, 'a/p'))
      .toEqual({ text: `ann merged <${web}/merge_requests/4|merge request !4> in <${web}|a/p>: *Feature*`, attachments: [] });
    // no message: an edit, no webhook, a running build
    expect(slackMessage('merge_request', { project, user: { username: 'ann' }, object_attributes: { iid: 4, state: 'opened', title: 'F', action: 'update' } }, props, 'a/p')).toBeNull();
    expect(slackMessage('push', { project, user_name: 'Ann', ref: 'refs/heads/x', before: zero, after: 'a'.repeat(40) }, { webhook: null }, 'a/p')).toBeNull();
    expect(slackMessage('build', { project, build_status: 'running', commit: {} }, { ...props, notify_only_broken_builds: false }, 'a/p')).toBeNull();
  });

  it('posts pushes, issues, notes and merge requests in 8.13 wording, each once, to the event channel, without GitLab headers', async () => {
    const p = await makeProject(s, alice, 'Slacked');
    const web = `${URL_BASE}/alice/slacked`;
    const proj = `<${web}|alice/Slacked>`;
    const put = await s.api('PUT', `/projects/${p.id}/services/slack`, alice, {
      webhook: `${recv.url}/slack`, username: 'gantry', channel: '#dev', issue_channel: '#issues',
    });
    expect(put.status).toBe(200);

    const first = await pushFiles(s.ctx, p.id, alice.id, { 'a.txt': 'a\n' }, { message: 'First' });
    const second = await pushFiles(s.ctx, p.id, alice.id, { 'b.txt': 'b\n' }, { message: 'Second' });
    const issue = await s.api('POST', `/projects/${p.id}/issues`, alice, { title: 'Broken thing', description: 'It [broke](http://logs.example/1).' });
    expect(issue.status).toBe(201);
    expect((await s.api('PUT', `/projects/${p.id}/issues/${issue.body.id}`, alice, { title: 'Broken thing!' })).status).toBe(200);
    expect((await s.api('POST', `/projects/${p.id}/issues/${issue.body.id}/notes`, alice, { body: 'Looking *now*' })).status).toBe(201);
    expect((await s.api('PUT', `/projects/${p.id}/issues/${issue.body.id}`, alice, { state_event: 'close' })).status).toBe(200);
    expect((await s.api('POST', `/projects/${p.id}/repository/branches`, alice, { branch_name: 'feature', ref: 'master' })).status).toBe(201);
    const mr = await s.api('POST', `/projects/${p.id}/merge_requests`, alice, { source_branch: 'feature', target_branch: 'master', title: 'Add feature\nmore' });
    expect(mr.status, mr.text).toBe(201);
    await drained();

    const got = messages('/slack');
    expect(got).toEqual([
      { text: `alice pushed new branch <${web}/commits/master|master> to ${proj}`, attachments: [], channel: '#dev', username: 'gantry' },
      {
        text: `alice pushed to branch <${web}/commits/master|master> of ${proj} (<${web}/compare/${first}...${second}|Compare changes>)`,
        attachments: [{ text: `<${web}/commit/${second}|${second.slice(0, 8)}>: Second\n - Ci Tester`, color: '#345' }],
        channel: '#dev', username: 'gantry',
      },
      {
        text: `[${proj}] Issue opened by alice`,
        attachments: [{ title: '#1 Broken thing', title_link: `${web}/issues/1`, text: 'It <http://logs.example/1|broke>.', color: '#C95823' }],
        channel: '#issues', username: 'gantry',
      },
      {
        text: expect.stringMatching(new RegExp(`^alice commented on <${esc(web)}/issues/1#note_\\d+\\|issue #1> in ${esc(proj)}: \\*Broken thing!\\*$`)),
        attachments: [{ text: 'Looking *now*', color: '#345' }], channel: '#dev', username: 'gantry',
      },
      {
        text: `[${proj}] Issue <${web}/issues/1|#1 Broken thing!> closed by alice`, attachments: [], channel: '#issues', username: 'gantry',
      },
      { text: `alice pushed new branch <${web}/commits/feature|feature> to ${proj}`, attachments: [], channel: '#dev', username: 'gantry' },
      {
        text: `alice opened <${web}/merge_requests/1|merge request !1> in ${proj}: *Add feature*`, attachments: [], channel: '#dev', username: 'gantry',
      },
    ]);
    const reqs = recv.to('/slack');
    expect(reqs.every((r) => r.headers['x-gitlab-event'] === undefined && r.headers['x-gitlab-token'] === undefined)).toBe(true);
    expect(reqs.every((r) => r.headers['content-type'] === 'application/json')).toBe(true);
    expect([...recv.countsByKey('/slack').values()].every((n) => n === 1)).toBe(true);
  });

  it('posts builds and pipelines by outcome (passed only when not "only broken"), honours the event switches, and stops after DELETE', async () => {
    const p = await makeProject(s, alice, 'Built');
    const web = `${URL_BASE}/alice/built`;
    const proj = `<${web}|alice/Built>`;
    // pushes and issues switched off; successful builds and pipelines wanted
    expect((await s.api('PUT', `/projects/${p.id}/services/slack`, alice, {
      webhook: `${recv.url}/ci`, push_events: false, issues_events: false, notify_only_broken_builds: false, notify_only_broken_pipelines: false,
    })).status).toBe(200);
    const sha = await pushFiles(s.ctx, p.id, alice.id, { '.gitlab-ci.yml': ONE_JOB }, { message: 'Add CI' });
    const pipeline = (await pipelinesOf(s.ctx, p.id))[0]!;
    await drive(s.ctx, pipeline.id, 'compile', 'run', 'success');
    expect((await s.api('POST', `/projects/${p.id}/issues`, alice, { title: 'Quiet' })).status).toBe(201);
    await drained();
    const finished = (await pipelinesOf(s.ctx, p.id))[0]!;
    const build = await buildNamed(s.ctx, pipeline.id, 'compile');
    const buildSeconds = Math.round((Date.parse(build.finishedAt!) - Date.parse(build.startedAt!)) / 1000);
    const short = sha.slice(0, 8);
    const buildText = `${proj}: Commit <${web}/commit/${sha}/builds|${short}> of <${web}/commits/master|master> branch by Ci Tester passed in ${buildSeconds} second${buildSeconds === 1 ? '' : 's'}`;
    const pipeText = `<${web}|alice/built>: Pipeline <${web}/pipelines/${pipeline.id}|${short}> of <${web}/commits/master|master> branch by Ci Tester passed in ${finished.duration} second${finished.duration === 1 ? '' : 's'}`;
    const ci = messages('/ci');
    expect(ci).toEqual([
      { text: '', attachments: [{ text: buildText, color: 'good' }], fallback: buildText },
      { text: '', attachments: [{ text: pipeText, color: 'good' }], fallback: pipeText },
    ]);

    // only broken ones (8.13's default): a success says nothing, a failure does
    expect((await s.api('PUT', `/projects/${p.id}/services/slack`, alice, {
      webhook: `${recv.url}/ci`, notify_only_broken_builds: true, notify_only_broken_pipelines: true,
    })).status).toBe(200);
    await pushFiles(s.ctx, p.id, alice.id, { 'x.txt': 'x\n' }, { message: 'Again' });
    const again = (await pipelinesOf(s.ctx, p.id))[1]!;
    await drive(s.ctx, again.id, 'compile', 'run', 'drop');
    await drained();
    const broken = messages('/ci').slice(2);
    expect(broken.map((m) => m.attachments[0].color)).toEqual(['danger', 'danger']);
    expect(broken[0].attachments[0].text).toMatch(/ failed in /);
    expect(broken[1].attachments[0].text).toMatch(new RegExp(`Pipeline <${web}/pipelines/${again.id}\\|`));

    // deleted: nothing more
    expect((await s.api('DELETE', `/projects/${p.id}/services/slack`, alice)).status).toBe(200);
    await pushFiles(s.ctx, p.id, alice.id, { 'y.txt': 'y\n' }, { message: 'After' });
    const last = (await pipelinesOf(s.ctx, p.id))[2]!;
    await drive(s.ctx, last.id, 'compile', 'run', 'drop');
    await drained();
    await sleep(100);
    expect(messages('/ci')).toHaveLength(4);
  });
});
