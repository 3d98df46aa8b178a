// Crash suite (`npm run bench -- crash`): rounds of SIGKILL during mixed writes, with a restart on the same data dir.
// Writers: issues, notes, merges (branch, commit, merge request, merge), git pushes over HTTP, trace appends and
// artifact uploads through the runner API; every project has a hook to a local receiver that outlives the daemon.
// Every 2xx (and every push git reported done) is recorded; after each kill the database passes integrity_check and
// every repository git fsck; after each restart every acknowledged write is read back (trace prefixes and artifacts
// by size and SHA-256). At the end every acknowledged event must have been delivered; daemon/services/hooks/deliveries.ts
// promises at least once (a send cut by the kill is sent again when its lease ends, with the same Idempotency-Key, so
// the receiver can drop it): such resends are counted and bounded by the sends that can be in flight at a kill (4 per
// round); an event that arrives under two different keys (queued twice) is a problem.
import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { machine, startDaemon, writeSection } from './lib.mjs';
import { checkDatabase, checkRepositories } from '../fuzz/run.mjs';
import { call, git, startReceiver } from '../fuzz/world.mjs';

/** git, asynchronously (the writers run side by side). */
const gitAsync = async (args, cwd) => (await promisify(execFile)('git', ['-c', 'user.name=Crash', '-c', 'user.email=crash@example.com', ...args], { cwd })).stdout;
const sha256 = (b) => createHash('sha256').update(b).digest('hex');
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const JOBS = 400;

/**
 * A hook receiver that counts deliveries per event key (issue id + action, note id, ref + sha, merge request id), and
 * the distinct Idempotency-Key headers each event arrived with: a resend of one delivery keeps its key (a receiver
 * drops it), a second delivery of one event would bring a new key.
 */
async function countingReceiver() {
  const r = await startReceiver();
  const counts = new Map();
  const keys = new Map();
  const keyOf = (e) => {
    let b;
    try { b = JSON.parse(e.body); } catch { return null; }
    if (b.object_kind === 'issue') return `issue:${b.object_attributes.id}:${b.object_attributes.action}`;
    if (b.object_kind === 'note') return `note:${b.object_attributes.id}`;
    if (b.object_kind === 'push') return `push:${b.ref}:${b.after}`;
    if (b.object_kind === 'merge_request') return `merge_request:${b.object_attributes.id}:${b.object_attributes.action}`;
    return `${b.object_kind}:other`;
  };
  const tally = () => {
    counts.clear();
    keys.clear();
    for (const e of r.received) {
      const k = keyOf(e);
      if (!k) continue;
      counts.set(k, (counts.get(k) ?? 0) + 1);
      if (!keys.has(k)) keys.set(k, new Set());
      keys.get(k).add(e.key ?? '(none)');
    }
  };
  return { ...r, counts: () => { tally(); return counts; }, keys: () => { tally(); return keys; } };
}

export async function run({ rounds = Number(process.env.BENCH_CRASH_ROUNDS ?? 20), writers = 6 } = {}) {
  const work = mkdtempSync(join(tmpdir(), 'gantry-crash-'));
  const dataDir = join(work, 'data');
  mkdirSync(dataDir);
  const receiver = await countingReceiver();
  let d = await startDaemon({ GANTRY_HOOK_RETRY_BASE_MS: '200' }, { dataDir, keep: true, stderr: 'pipe' });
  const acked = { issues: [], notes: [], pushes: [], merges: [], traces: new Map(), traceParts: 0, artifacts: [] };
  const problems = [];
  const stats = { requests: 0, acked: 0, failedWrites: 0, refused: {}, rounds: [] };
  try {
    const admin = (await call(d.url, 'POST', '/api/v3/session', null, { login: 'root', password: 'benchpassword1' }, 201)).body.private_token;
    const project = (await call(d.url, 'POST', '/api/v3/projects', admin, { name: 'crash' }, 201)).body;
    const pid = project.id;
    await call(d.url, 'POST', `/api/v3/projects/${pid}/hooks`, admin, { url: `${receiver.url}/hook`, push_events: true, issues_events: true, merge_requests_events: true, note_events: true }, 201);
    const registration = (await call(d.url, 'GET', '/api/v3/application/settings', admin, undefined, 200)).body.runners_registration_token;
    const runner = (await call(d.url, 'POST', '/ci/api/v1/runners/register', null, { token: registration, description: 'crash', run_untagged: true }, 201)).body;
    // The first push: a README and a pipeline of many one-line jobs for the runner writers to claim.
    const seed = join(work, 'seed');
    mkdirSync(seed);
    git(['init', '-q'], seed);
    writeFileSync(join(seed, 'README.md'), '# crash\n');
    // Only ci-* branches run the jobs: the pushes and merges of the writers make no pipelines of their own.
    writeFileSync(join(seed, '.gitlab-ci.yml'), Array.from({ length: JOBS }, (_, j) => `job${j}:\n  script: ["true"]\n  only: [/^ci-/]\n`).join(''));
    git(['add', '-A'], seed);
    git(['commit', '-q', '-m', 'seed'], seed);
    const remote = () => `${d.url.replace('://', `://root:${admin}@`)}/${project.path_with_namespace}.git`;
    git(['push', '-q', remote(), 'master', 'master:ci-jobs'], seed);
    const issue0 = (await call(d.url, 'POST', `/api/v3/projects/${pid}/issues`, admin, { title: 'notes go here' }, 201)).body;
    acked.noteIssue = issue0.id;
    const clones = [];
    for (let w = 0; w < writers; w++) {
      const c = join(work, `clone-${w}`);
      git(['clone', '-q', remote(), c]);
      clones.push(c);
    }

    let seq = 0;
    const ok = (s) => s >= 200 && s < 300;
    /** One write of a random kind; records it when acknowledged. Throws (ignored) when the daemon is gone. */
    const ops = {
      issue: async () => {
        const title = `crash issue ${seq++}`;
        const r = await call(d.url, 'POST', `/api/v3/projects/${pid}/issues`, admin, { title, description: 'x'.repeat(200) });
        if (ok(r.status)) acked.issues.push({ id: r.body.id, title });
        return r.status;
      },
      note: async () => {
        const body = `crash note ${seq++}`;
        const r = await call(d.url, 'POST', `/api/v3/projects/${pid}/issues/${issue0.id}/notes`, admin, { body });
        if (ok(r.status)) acked.notes.push({ id: r.body.id, body });
        return r.status;
      },
      push: async (w) => {
        const n = seq++;
        const c = clones[w];
        writeFileSync(join(c, `push-${n}.txt`), `${n}\n`);
        await gitAsync(['checkout', '-q', '-B', `p-${n}`, 'origin/master'], c);
        await gitAsync(['add', '-A'], c);
        await gitAsync(['commit', '-q', '-m', `push ${n}`], c);
        const sha = (await gitAsync(['rev-parse', 'HEAD'], c)).trim();
        try {
          await gitAsync(['push', '-q', remote(), `p-${n}`], c);
        } catch {
          return 0;
        }
        acked.pushes.push({ ref: `refs/heads/p-${n}`, sha });
        return 200;
      },
      merge: async () => {
        const n = seq++;
        const branch = `m-${n}`;
        let r = await call(d.url, 'POST', `/api/v3/projects/${pid}/repository/branches`, admin, { branch_name: branch, ref: 'master' });
        if (!ok(r.status)) return r.status;
        r = await call(d.url, 'POST', `/api/v3/projects/${pid}/repository/files`, admin, { file_path: `merge-${n}.txt`, branch_name: branch, content: `${n}\n`, commit_message: `merge ${n}` });
        if (!ok(r.status)) return r.status;
        r = await call(d.url, 'POST', `/api/v3/projects/${pid}/merge_requests`, admin, { source_branch: branch, target_branch: 'master', title: `merge ${n}` });
        if (!ok(r.status)) return r.status;
        const mr = r.body;
        r = await call(d.url, 'PUT', `/api/v3/projects/${pid}/merge_requests/${mr.id}/merge`, admin, {});
        if (ok(r.status)) acked.merges.push({ id: mr.id, file: `merge-${n}.txt` });
        return r.status;
      },
      build: async () => {
        const claim = await call(d.url, 'POST', '/ci/api/v1/builds/register', null, { token: runner.token });
        if (claim.status !== 201) return claim.status;
        const build = { id: claim.body.id, token: claim.body.token, bytes: Buffer.alloc(0) };
        acked.traces.set(build.id, { length: 0, hash: sha256(Buffer.alloc(0)) });
        for (let i = 0; i < 8; i++) {
          const chunk = randomBytes(512 + Math.floor(Math.random() * 4096)).toString('base64');
          const start = build.bytes.length;
          const res = await fetch(`${d.url}/ci/api/v1/builds/${build.id}/trace.txt`, {
            method: 'PATCH', headers: { 'build-token': build.token, 'content-range': `${start}-${start + chunk.length - 1}`, 'content-type': 'text/plain' }, body: chunk,
          });
          await res.arrayBuffer();
          if (res.status !== 202) return res.status;
          build.bytes = Buffer.concat([build.bytes, Buffer.from(chunk)]);
          acked.traceParts += 1;
          acked.traces.set(build.id, { length: build.bytes.length, hash: sha256(build.bytes) });
        }
        const data = randomBytes(64 * 1024 + Math.floor(Math.random() * 256 * 1024));
        const form = new FormData();
        form.append('file', new Blob([data]), 'artifacts.zip');
        const res = await fetch(`${d.url}/ci/api/v1/builds/${build.id}/artifacts?token=${build.token}`, { method: 'POST', body: form });
        await res.arrayBuffer();
        if (res.status === 201) acked.artifacts.push({ build: build.id, size: data.length, hash: sha256(data) });
        return res.status;
      },
    };
    const kinds = ['issue', 'issue', 'note', 'note', 'push', 'merge', 'build'];

    for (let round = 1; round <= rounds; round++) {
      const t0 = performance.now();
      const before = { issues: acked.issues.length, notes: acked.notes.length, pushes: acked.pushes.length, merges: acked.merges.length, artifacts: acked.artifacts.length };
      let dead = false;
      const killAfter = 2000 + Math.floor(Math.random() * 6000);
      const killer = sleep(killAfter).then(() => { dead = true; d.child.kill('SIGKILL'); });
      await Promise.all(Array.from({ length: writers }, async (_, w) => {
        while (!dead) {
          const kind = kinds[Math.floor(Math.random() * kinds.length)];
          stats.requests += 1;
          try {
            const status = await ops[kind](w);
            if (!ok(status)) {
              stats.failedWrites += 1;
              stats.refused[`${kind} ${status}`] = (stats.refused[`${kind} ${status}`] ?? 0) + 1;
            }
          } catch {
            stats.failedWrites += 1;
            if (dead) break;
          }
        }
      }));
      await killer;
      await d.exited;
      // git processes the daemon started may outlive it by a moment (a receive-pack finishing): let them end.
      await sleep(300);
      const db = await checkDatabase(join(dataDir, 'gantry.db'));
      const repos = checkRepositories(join(dataDir, 'repositories'));
      for (const p of [...db, ...repos]) problems.push(`round ${round} after the kill: ${p}`);
      d = await startDaemon({ GANTRY_HOOK_RETRY_BASE_MS: '200' }, { dataDir, keep: true, stderr: 'pipe' });
      const lost = await verify(d.url, admin, pid, acked, before);
      for (const p of lost) problems.push(`round ${round}: ${p}`);
      const added = Object.fromEntries(Object.entries(before).map(([k, v]) => [k, acked[k].length - v]));
      stats.rounds.push({ round, killAfter, ms: Math.round(performance.now() - t0), added, lost: lost.length });
      process.stderr.write(`bench crash: round ${round}: killed after ${killAfter} ms; acknowledged ${JSON.stringify(added)}; lost ${lost.length}\n`);
    }
    // Every acknowledged write again, on the last start, then the hook deliveries.
    const lostAtEnd = await verify(d.url, admin, pid, acked, { issues: 0, notes: 0, pushes: 0, merges: 0, artifacts: 0 });
    for (const p of lostAtEnd) problems.push(`at the end: ${p}`);
    const expected = [
      ...acked.issues.map((i) => `issue:${i.id}:open`), ...acked.notes.map((n) => `note:${n.id}`),
      ...acked.pushes.map((p) => `push:${p.ref}:${p.sha}`), ...acked.merges.map((m) => `merge_request:${m.id}:merge`),
    ];
    // A send cut by the last kill is sent again once its lease (15 s) ends: wait for the outbox to drain.
    let missing = expected;
    for (let t = 0; t < 90 && missing.length; t++) {
      await sleep(1000);
      const counts = receiver.counts();
      missing = expected.filter((k) => !counts.get(k));
    }
    const counts = receiver.counts();
    const duplicates = expected.filter((k) => (counts.get(k) ?? 0) > 1).length;
    const extraSends = expected.reduce((n, k) => n + Math.max(0, (counts.get(k) ?? 0) - 1), 0);
    // An event that arrived under two Idempotency-Keys was queued twice: a receiver could not tell, so that is a bug.
    const keys = receiver.keys();
    const twiceQueued = expected.filter((k) => (keys.get(k)?.size ?? 0) > 1);
    for (const k of twiceQueued) problems.push(`hook event sent as two different deliveries (two Idempotency-Keys): ${k}`);
    const keyless = [...keys.values()].filter((set) => set.has('(none)')).length;
    if (keyless) problems.push(`${keyless} hook events arrived without an Idempotency-Key header`);
    for (const k of missing) problems.push(`hook never delivered: ${k}`);
    if (extraSends > 4 * rounds) problems.push(`${extraSends} repeated hook deliveries, more than the 4 sends that can be in flight at each of ${rounds} kills`);
    const total = expected.length + acked.artifacts.length + acked.traceParts;
    const md = `## Crash rounds (${new Date().toISOString().slice(0, 10)})

Machine: ${machine()}. \`npm run bench -- crash\` (scripts/bench/crash.mjs): ${rounds} rounds of ${writers} concurrent writers (issues,
notes on one issue, merges: branch + commit + merge request + merge, git pushes over HTTP of new branches, a runner
claiming builds, appending 8 trace parts and uploading an artifact), SIGKILL after 2-8 s, restart on the same data dir.

| measurement | result |
|---|---|
| operations started (a merge is 4 requests; a build is a claim, 8 trace parts and an artifact upload) | ${stats.requests}, of which ${stats.failedWrites} were cut by a kill or refused |
| acknowledged writes | ${total}: issues ${acked.issues.length}, notes ${acked.notes.length}, pushes ${acked.pushes.length}, merges ${acked.merges.length}, trace parts ${acked.traceParts} (${acked.traces.size} builds), artifacts ${acked.artifacts.length} |
| acknowledged writes lost after a restart | **${problems.filter((p) => !p.startsWith('hook') && !p.includes('after the kill')).length}** |
| database integrity_check / git fsck after each kill | ${problems.filter((p) => p.includes('after the kill')).length ? `**${problems.filter((p) => p.includes('after the kill')).length} problems**` : 'ok in every round'} |
| hook events acknowledged / never delivered | ${expected.length} / **${missing.length}** |
| events received again after a kill (the same delivery resent: same Idempotency-Key, which a receiver drops) | ${duplicates} events, ${extraSends} resends |
| events sent as two different deliveries (two Idempotency-Keys) | **${twiceQueued.length}** |

${problems.length ? `Problems:\n\n${problems.slice(0, 30).map((p) => `- ${p}`).join('\n')}\n` : 'No problems.'}`;
    writeSection('crash', md);
    process.stdout.write(`${md}\n`);
    return { problems, stats };
  } finally {
    if (d.child.exitCode === null) await d.stop();
    await receiver.stop();
    rmSync(work, { recursive: true, force: true });
  }
}

/** Read back what was acknowledged (from index `from` of each list; traces and artifacts all): a list of losses. */
async function verify(url, token, pid, acked, from) {
  const lost = [];
  const get = (path) => call(url, 'GET', path, token);
  for (const i of acked.issues.slice(from.issues)) {
    const r = await get(`/api/v3/projects/${pid}/issues/${i.id}`);
    if (r.status !== 200 || r.body.title !== i.title) lost.push(`issue ${i.id} (${r.status})`);
  }
  for (const n of acked.notes.slice(from.notes)) {
    const r = await get(`/api/v3/projects/${pid}/issues/${acked.noteIssue}/notes/${n.id}`);
    if (r.status !== 200 || r.body.body !== n.body) lost.push(`note ${n.id} (${r.status})`);
  }
  for (const p of acked.pushes.slice(from.pushes)) {
    const r = await get(`/api/v3/projects/${pid}/repository/branches/${encodeURIComponent(p.ref.slice('refs/heads/'.length))}`);
    if (r.status !== 200 || r.body.commit?.id !== p.sha) lost.push(`push ${p.ref} -> ${p.sha} (${r.status} ${r.body?.commit?.id})`);
  }
  for (const m of acked.merges.slice(from.merges)) {
    const r = await get(`/api/v3/projects/${pid}/merge_requests/${m.id}`);
    const f = await get(`/api/v3/projects/${pid}/repository/files?file_path=${m.file}&ref=master`);
    if (r.body?.state !== 'merged' || f.status !== 200) lost.push(`merge ${m.id} (${r.body?.state}, ${m.file} on master: ${f.status})`);
  }
  for (const [id, t] of acked.traces) {
    const res = await fetch(`${url}/api/v3/projects/${pid}/builds/${id}/trace`, { headers: { 'private-token': token } });
    const body = Buffer.from(await res.arrayBuffer());
    if (body.length < t.length || sha256(body.subarray(0, t.length)) !== t.hash) lost.push(`trace of build ${id}: ${body.length} bytes, ${t.length} acknowledged${body.length >= t.length ? ', different content' : ''}`);
  }
  for (const a of acked.artifacts) {
    const res = await fetch(`${url}/api/v3/projects/${pid}/builds/${a.build}/artifacts`, { headers: { 'private-token': token } });
    const body = Buffer.from(await res.arrayBuffer());
    if (res.status !== 200 || body.length !== a.size || sha256(body) !== a.hash) lost.push(`artifacts of build ${a.build}: ${res.status}, ${body.length} of ${a.size} bytes`);
  }
  return lost;
}
