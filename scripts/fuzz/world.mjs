// A realistic instance to fuzz (and to load): users of each level, private/internal/public projects with
// repositories and commits pushed over HTTP, an issue, a merge request, a pipeline with builds claimed by a runner
// (a trace and an artifact), a hook to a local receiver, labels, a milestone, a variable, a token. Everything through
// the public API and git, as a user would make it.
import { execFileSync } from 'node:child_process';
import { createServer } from 'node:http';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT_PASSWORD } from '../bench/lib.mjs';

export const PASSWORD = 'fuzz-password-1';

/** A JSON call: { status, body, headers }. Throws unless the status is `expect` (when given). */
export async function call(url, method, path, token, body, expect) {
  const headers = { ...(token ? { 'private-token': token } : {}), ...(body !== undefined ? { 'content-type': 'application/json' } : {}) };
  const res = await fetch(`${url}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  let parsed = text;
  try { parsed = text ? JSON.parse(text) : null; } catch { /* not JSON */ }
  if (expect !== undefined && res.status !== expect) throw new Error(`${method} ${path}: ${res.status} ${text.slice(0, 300)} (expected ${expect})`);
  return { status: res.status, body: parsed, headers: res.headers };
}

/** git with a fixed identity, in `cwd`. */
export function git(args, cwd, input) {
  return execFileSync('git', ['-c', 'user.name=Fuzz', '-c', 'user.email=fuzz@example.com', '-c', 'init.defaultBranch=master', ...args], { cwd, input, stdio: ['pipe', 'pipe', 'pipe'] }).toString();
}

/** A local hook receiver: counts requests (per X-Gitlab-Event and per payload key) and answers 200. */
export async function startReceiver() {
  const received = [];
  const server = createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      received.push({ event: req.headers['x-gitlab-event'], key: req.headers['idempotency-key'], path: req.url, body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(200).end('ok');
    });
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${server.address().port}`, received, stop: () => new Promise((r) => { server.closeAllConnections(); server.close(r); }) };
}

const CI_YML = `stages: [build, test]
compile:
  stage: build
  script: ["echo compile"]
  artifacts:
    paths: [out/]
unit:
  stage: test
  script: ["echo unit"]
manual-deploy:
  stage: test
  when: manual
  script: ["echo deploy"]
`;

/**
 * Seed the instance at `url` (root's password ROOT_PASSWORD); `work` is a scratch dir for clones; `hookUrl` receives
 * the project hooks. Returns the world: tokens by role, projects (with their objects' ids), users, runner.
 */
export async function seedWorld(url, work, hookUrl) {
  const root = (await call(url, 'POST', '/api/v3/session', null, { login: 'root', password: ROOT_PASSWORD }, 201)).body;
  const admin = root.private_token;
  const users = {};
  for (const name of ['owner', 'master', 'developer', 'reporter', 'guest', 'stranger', 'blocked', 'victim1', 'victim2']) {
    const u = (await call(url, 'POST', '/api/v3/users', admin, { username: `fz-${name}`, name: `Fuzz ${name}`, email: `${name}@fuzz.example.com`, password: PASSWORD, can_create_group: true }, 201)).body;
    const token = (await call(url, 'POST', '/api/v3/session', null, { login: u.username, password: PASSWORD }, 201)).body.private_token;
    users[name] = { id: u.id, username: u.username, token };
  }
  await call(url, 'PUT', `/api/v3/users/${users.blocked.id}/block`, admin, undefined, 200);
  const pat = (await call(url, 'POST', '/api/v3/user/personal_access_tokens', users.developer.token, { name: 'fuzz' }, 201)).body.token;
  const group = (await call(url, 'POST', '/api/v3/groups', users.owner.token, { name: 'Fuzz Group', path: 'fuzz-group', visibility_level: 0 }, 201)).body;
  const spareGroup = (await call(url, 'POST', '/api/v3/groups', admin, { name: 'Spare Group', path: 'spare-group' }, 201)).body;
  for (const [role, level] of [['master', 40], ['developer', 30], ['reporter', 20], ['guest', 10]]) {
    await call(url, 'POST', `/api/v3/groups/${group.id}/members`, users.owner.token, { user_id: users[role].id, access_level: level }, 201);
  }
  const registration = (await call(url, 'GET', '/api/v3/application/settings', admin, undefined, 200)).body.runners_registration_token;
  const runner = (await call(url, 'POST', '/ci/api/v1/runners/register', null, { token: registration, description: 'fuzz runner', run_untagged: true }, 201)).body;

  const projects = [];
  for (const [name, visibility] of [['private', 0], ['internal', 10], ['public', 20]]) {
    const p = (await call(url, 'POST', '/api/v3/projects', users.owner.token, { name: `${name}-proj`, namespace_id: group.id, visibility_level: visibility }, 201)).body;
    projects.push({ ...(await seedProject(url, work, p, { admin, users, hookUrl, runner, group })), visibility, name: p.name, pathName: p.path, hookUrl });
  }
  const spare = [];
  for (let i = 0; i < 3; i++) spare.push((await call(url, 'POST', '/api/v3/projects', admin, { name: `spare-${i}` }, 201)).body.id);
  // A fork of the public project, so fork routes have one to find.
  const fork = (await call(url, 'POST', `/api/v3/projects/fork/${projects[2].id}`, users.developer.token, {}, 201)).body;
  return {
    admin, rootId: root.id, users, pat, group: group.id, spareGroup: spareGroup.id, registration, runner, projects, spare, fork: fork.id,
  };
}

/** Push commits, a branch and a tag, then make the collaboration and CI objects of one project. */
async function seedProject(url, work, p, { admin, users, hookUrl, runner }) {
  const dir = join(work, `src-${p.id}`);
  mkdirSync(dir, { recursive: true });
  git(['init', '-q'], dir);
  mkdirSync(join(dir, 'src'), { recursive: true });
  writeFileSync(join(dir, 'README.md'), `# ${p.name}\n\nFuzz target.\n`);
  writeFileSync(join(dir, 'src/main.js'), 'console.log("hello");\n');
  writeFileSync(join(dir, 'src/ünïcode file.txt'), 'ü\n');
  writeFileSync(join(dir, '.gitlab-ci.yml'), CI_YML);
  git(['add', '-A'], dir);
  git(['commit', '-q', '-m', 'Initial commit'], dir);
  writeFileSync(join(dir, 'src/main.js'), 'console.log("hello, world");\n');
  git(['commit', '-q', '-am', 'Second commit'], dir);
  git(['checkout', '-q', '-b', 'feature'], dir);
  writeFileSync(join(dir, 'feature.txt'), 'a feature\n');
  git(['add', '-A'], dir);
  git(['commit', '-q', '-m', 'Add a feature'], dir);
  git(['checkout', '-q', 'master'], dir);
  git(['tag', '-a', 'v1.0', '-m', 'first release'], dir);
  const remote = `${url.replace('://', `://fz-owner:${users.owner.token}@`)}/${p.path_with_namespace}.git`;
  git(['push', '-q', remote, 'master', 'feature', 'v1.0'], dir);
  const sha = git(['rev-parse', 'master'], dir).trim();
  const featureSha = git(['rev-parse', 'feature'], dir).trim();

  const id = p.id;
  const tok = users.owner.token;
  await call(url, 'PUT', `/api/v3/projects/${id}/repository/branches/master/protect`, tok, {}, 200);
  const hook = (await call(url, 'POST', `/api/v3/projects/${id}/hooks`, tok, {
    url: `${hookUrl}/hook/${id}`, push_events: true, issues_events: true, merge_requests_events: true, note_events: true, build_events: true, pipeline_events: true, tag_push_events: true,
  }, 201)).body;
  const label = (await call(url, 'POST', `/api/v3/projects/${id}/labels`, tok, { name: 'bug', color: '#ff0000' }, 201)).body;
  const milestone = (await call(url, 'POST', `/api/v3/projects/${id}/milestones`, tok, { title: 'v1' }, 201)).body;
  const issue = (await call(url, 'POST', `/api/v3/projects/${id}/issues`, users.developer.token, { title: 'A bug', description: 'It breaks', labels: 'bug', milestone_id: milestone.id }, 201)).body;
  const confidential = (await call(url, 'POST', `/api/v3/projects/${id}/issues`, tok, { title: 'Secret', confidential: true }, 201)).body;
  const note = (await call(url, 'POST', `/api/v3/projects/${id}/issues/${issue.id}/notes`, users.reporter.token, { body: 'Seen it too' }, 201)).body;
  const award = (await call(url, 'POST', `/api/v3/projects/${id}/issues/${issue.id}/award_emoji`, users.reporter.token, { name: 'thumbsup' }, 201)).body;
  const mr = (await call(url, 'POST', `/api/v3/projects/${id}/merge_requests`, users.developer.token, { source_branch: 'feature', target_branch: 'master', title: 'Add a feature' }, 201)).body;
  const mrNote = (await call(url, 'POST', `/api/v3/projects/${id}/merge_requests/${mr.id}/notes`, users.master.token, { body: 'Looks good' }, 201)).body;
  await call(url, 'POST', `/api/v3/projects/${id}/variables`, tok, { key: 'FUZZ_VAR', value: 'secret' }, 201);
  await call(url, 'POST', `/api/v3/projects/${id}/statuses/${sha}`, tok, { state: 'success', name: 'external' }, 201);

  // The pipeline of the push: claim its first build with the runner, append a trace, upload an artifact.
  let pipeline = null;
  for (let i = 0; i < 100 && !pipeline; i++) {
    pipeline = (await call(url, 'GET', `/api/v3/projects/${id}/pipelines`, admin, undefined, 200)).body.find((x) => x.sha === sha) ?? null;
    if (!pipeline) await new Promise((r) => setTimeout(r, 50));
  }
  if (!pipeline) throw new Error(`no pipeline for ${p.path_with_namespace}`);
  const claim = await call(url, 'POST', '/ci/api/v1/builds/register', null, { token: runner.token });
  let build = null;
  if (claim.status === 201) {
    build = { id: claim.body.id, token: claim.body.token };
    await fetch(`${url}/ci/api/v1/builds/${build.id}/trace.txt`, { method: 'PATCH', headers: { 'build-token': build.token, 'content-range': '0-11', 'content-type': 'text/plain' }, body: 'trace line 1' });
    const form = new FormData();
    form.append('file', new Blob([Buffer.from('not really a zip')]), 'artifacts.zip');
    await fetch(`${url}/ci/api/v1/builds/${build.id}/artifacts?token=${build.token}`, { method: 'POST', body: form });
  }
  const builds = (await call(url, 'GET', `/api/v3/projects/${id}/builds`, admin, undefined, 200)).body.map((b) => b.id);
  return {
    id, path: p.path_with_namespace, sha, featureSha, hook: hook.id, label: label.id, labelName: label.name, milestone: milestone.id,
    issue: issue.id, confidential: confidential.id, note: note.id, award: award.id, mr: mr.id, mrNote: mrNote.id,
    pipeline: pipeline.id, builds, build, variable: 'FUZZ_VAR',
  };
}

/**
 * Put back what fuzzing took away, so that later requests still reach real objects: the projects' settings, names,
 * visibility and archived state, the feature branch, and the issue, merge request, notes, label, milestone and hook
 * when they were deleted (the world's ids are updated in place). Runs as admin; errors are ignored.
 */
export async function repairWorld(url, w) {
  const admin = w.admin;
  const quiet = async (method, path, body) => {
    try { return await call(url, method, path, admin, body); } catch { return { status: 0, body: null }; }
  };
  for (const p of w.projects) {
    const id = p.id;
    await quiet('PUT', `/api/v3/projects/${id}`, {
      name: p.name, path: p.pathName, visibility_level: p.visibility, issues_enabled: true, merge_requests_enabled: true, builds_enabled: true,
      snippets_enabled: true, wiki_enabled: true, public_builds: true, default_branch: 'master', only_allow_merge_if_build_succeeds: false,
    });
    await quiet('POST', `/api/v3/projects/${id}/unarchive`);
    if ((await quiet('GET', `/api/v3/projects/${id}/repository/branches/feature`)).status === 404) {
      await quiet('POST', `/api/v3/projects/${id}/repository/branches`, { branch_name: 'feature', ref: p.featureSha });
    }
    const again = async (getPath, create) => {
      if ((await quiet('GET', getPath)).status !== 404) return null;
      const r = await create();
      return r.status === 201 ? r.body.id : null;
    };
    p.issue = (await again(`/api/v3/projects/${id}/issues/${p.issue}`, () => quiet('POST', `/api/v3/projects/${id}/issues`, { title: 'A bug again' }))) ?? p.issue;
    p.note = (await again(`/api/v3/projects/${id}/issues/${p.issue}/notes/${p.note}`, () => quiet('POST', `/api/v3/projects/${id}/issues/${p.issue}/notes`, { body: 'again' }))) ?? p.note;
    p.mr = (await again(`/api/v3/projects/${id}/merge_requests/${p.mr}`, () => quiet('POST', `/api/v3/projects/${id}/merge_requests`, { source_branch: 'feature', target_branch: 'master', title: 'Again' }))) ?? p.mr;
    p.mrNote = (await again(`/api/v3/projects/${id}/merge_requests/${p.mr}/notes/${p.mrNote}`, () => quiet('POST', `/api/v3/projects/${id}/merge_requests/${p.mr}/notes`, { body: 'again' }))) ?? p.mrNote;
    p.milestone = (await again(`/api/v3/projects/${id}/milestones/${p.milestone}`, () => quiet('POST', `/api/v3/projects/${id}/milestones`, { title: `v-${Date.now()}` }))) ?? p.milestone;
    p.hook = (await again(`/api/v3/projects/${id}/hooks/${p.hook}`, () => quiet('POST', `/api/v3/projects/${id}/hooks`, { url: `${p.hookUrl}/hook/${id}`, issues_events: true, note_events: true }))) ?? p.hook;
    const labels = (await quiet('GET', `/api/v3/projects/${id}/labels`)).body;
    if (Array.isArray(labels) && !labels.some((l) => l.id === p.label)) {
      const l = await quiet('POST', `/api/v3/projects/${id}/labels`, { name: `bug-${Date.now()}`, color: '#ff0000' });
      if (l.status === 201) p.label = l.body.id;
    }
  }
}
