// The pre-receive hook git receive-pack runs for every push over HTTP (core.hooksPath points at a shim that
// execs this file with the daemon's node). The daemon decided everything it could before spawning receive-pack
// and passed it in GANTRY_REF_RULES or the file GANTRY_REF_RULES_FILE ({"refs/heads/x": {"deny": "..."} | {"forcePush": "..."} | {}}); this script
// only adds what needs the pushed objects: whether an update of a protected branch is a force push.
// Plain JavaScript with no imports from the daemon, so it runs the same from the sources and from dist/.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

const UNKNOWN = 'You are not allowed to push code to this project.';
const isZero = (sha) => /^0+$/.test(sha);

let rules = null;
try {
  const file = process.env.GANTRY_REF_RULES_FILE;
  rules = JSON.parse(file ? readFileSync(file, 'utf8') : (process.env.GANTRY_REF_RULES ?? ''));
} catch {
  rules = null;
}

const refused = [];
const input = readFileSync(0, 'utf8');
for (const line of input.split('\n')) {
  if (!line.trim()) continue;
  const [oldSha, newSha, ref] = line.split(' ');
  const rule = rules?.[ref];
  if (!rule) {
    refused.push(UNKNOWN);
    continue;
  }
  if (rule.deny) {
    refused.push(rule.deny);
    continue;
  }
  if (rule.forcePush && !isZero(oldSha) && !isZero(newSha)) {
    // The pushed objects are visible here (receive-pack's quarantine is in this process's environment).
    const r = spawnSync(process.env.GANTRY_GIT || 'git', ['merge-base', '--is-ancestor', oldSha, newSha], { stdio: 'ignore' });
    if (r.status !== 0) refused.push(rule.forcePush);
  }
}

if (refused.length) {
  for (const m of new Set(refused)) process.stderr.write(`${m}\n`);
  process.exit(1);
}
process.exit(0);
