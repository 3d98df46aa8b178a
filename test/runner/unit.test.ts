/** Pure parts of the runner agent: script generation, trace bookkeeping, config file, paths, globs, backoff. */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ansiQuote, commandLines, generateScript, shellQuote } from '../../runner-agent/script.js';
import { contentRange, parseRangeLength, TraceBuffer } from '../../runner-agent/trace.js';
import { addRunner, ciApiBase, emptyConfig, loadConfig, parseTagList, removeRunner, saveConfig, validateConfig, type RunnerEntry } from '../../runner-agent/config.js';
import { buildVariables, cleanUrl, processEnvironment, projectDirName, runnerDirName, variable } from '../../runner-agent/environment.js';
import { archiveName, dedupePaths, globToRegExp, matchArtifactPaths, normaliseArtifactPath, shouldUpload } from '../../runner-agent/artifacts.js';
import { gitDepth, gitStrategy } from '../../runner-agent/git.js';
import { Backoff } from '../../runner-agent/runner.js';
import { formatLine } from '../../runner-agent/log.js';
import type { BuildPayload } from '../../runner-agent/types.js';

const dirs: string[] = [];
const tmp = () => {
  const d = mkdtempSync(join(tmpdir(), 'gantry-runner-unit-'));
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** Run a generated script with bash; returns exit code and output. */
function bash(script: string, cwd = tmp()): { code: number; out: string } {
  const file = join(cwd, 'script.sh');
  writeFileSync(file, script);
  try {
    const out = execFileSync('bash', ['--noprofile', '--norc', file], { cwd, stdio: ['ignore', 'pipe', 'pipe'] }).toString();
    return { code: 0, out };
  } catch (e) {
    const err = e as { status: number; stdout: Buffer };
    return { code: err.status, out: err.stdout.toString() };
  }
}

describe('script generation', () => {
  it('quotes anything for bash', () => {
    const nasty = `it's a "test" \\ $HOME \`id\` \n\ttab \x1b[0m`;
    expect(bash(`printf '%s' ${ansiQuote(nasty)}`).out).toBe(nasty);
    expect(bash(`printf '%s' ${shellQuote(nasty)}`).out).toBe(nasty);
  });

  it('splits commands into trimmed, non-blank lines', () => {
    expect(commandLines('echo a\n\n  echo b  \n')).toEqual(['echo a', 'echo b']);
    expect(commandLines(['echo a', 'echo b\necho c'])).toEqual(['echo a', 'echo b', 'echo c']);
    expect(commandLines(null)).toEqual([]);
  });

  it('echoes each command as a green `$ cmd` line and runs it', () => {
    const script = generateScript('echo one\necho "two $((1+1))"');
    expect(script.startsWith('set -eo pipefail\n')).toBe(true);
    const r = bash(script);
    expect(r.code).toBe(0);
    expect(r.out).toBe('\x1b[32;1m$ echo one\x1b[0;m\none\n\x1b[32;1m$ echo "two $((1+1))"\x1b[0;m\ntwo 2\n');
  });

  it('stops at the first failing command with its exit code (errexit and pipefail)', () => {
    const r = bash(generateScript('echo before\nfalse | true\necho never'));
    expect(r.code).toBe(1);
    expect(r.out).toContain('before');
    expect(r.out).not.toContain('\nnever');
    const e = bash(generateScript('echo x\nexit 3\necho y'));
    expect(e.code).toBe(3);
  });

  it('keeps multi-line shell constructs working and turns on xtrace for CI_DEBUG_TRACE', () => {
    const r = bash(generateScript('for i in 1 2; do\necho n$i\ndone'));
    expect(r.code).toBe(0);
    expect(r.out).toContain('n1\n');
    expect(r.out).toContain('n2\n');
    expect(generateScript('true', { debugTrace: true })).toContain('set -o xtrace');
  });

  it('gives commands an empty stdin-free run: an empty script exits 0', () => {
    expect(bash(generateScript('')).code).toBe(0);
  });
});

describe('trace bookkeeping', () => {
  it('formats Content-Range as <start>-<end> with the end exclusive', () => {
    expect(contentRange(0, 715)).toBe('0-715');
    expect(contentRange(715, 736)).toBe('715-736');
  });

  it('reads the server length from a Range header', () => {
    expect(parseRangeLength('0-715')).toBe(715);
    expect(parseRangeLength('bytes=0-12')).toBe(12);
    expect(parseRangeLength('')).toBeNull();
    expect(parseRangeLength(undefined)).toBeNull();
    expect(parseRangeLength('nonsense')).toBeNull();
  });

  it('sends what the server has not accepted yet, then only the new bytes', () => {
    const t = new TraceBuffer();
    t.append('hello ');
    let p = t.nextPatch();
    expect(p).toMatchObject({ start: 0, end: 6, range: '0-6' });
    expect(p.body.toString()).toBe('hello ');
    t.append('world');
    t.accepted(p.end);
    expect(t.pending).toBe(5);
    p = t.nextPatch();
    expect(p.range).toBe('6-11');
    expect(p.body.toString()).toBe('world');
    t.accepted(p.end);
    expect(t.nextPatch()).toMatchObject({ start: 11, end: 11, range: '11-11' });
    expect(t.text()).toBe('hello world');
  });

  it('resyncs after 416: resend from the server length, or ask for a full update when the server has more', () => {
    const t = new TraceBuffer();
    t.append('x'.repeat(736));
    t.accepted(736);
    expect(t.resync(715)).toBe('resend');
    expect(t.nextPatch().range).toBe('715-736');
    expect(t.resync(900)).toBe('full');
  });

  it('grows past its initial buffer and enforces the output limit with one notice', () => {
    const t = new TraceBuffer(100_000);
    for (let i = 0; i < 30; i++) t.append(Buffer.alloc(5000, 97));
    expect(t.isTruncated).toBe(true);
    const text = t.text();
    expect(text.startsWith('a'.repeat(100_000))).toBe(true);
    expect(text).toContain('Build log exceeded limit of 100000 bytes.');
    const len = t.length;
    t.append('more');
    expect(t.length).toBe(len);
    t.appendNotice('ERROR: x\n');
    expect(t.text().endsWith('ERROR: x\n')).toBe(true);
  });
});

const entry = (token: string, extra: Partial<RunnerEntry> = {}): RunnerEntry => ({
  id: 1, description: 'r', url: 'http://127.0.0.1:3080', token, tags: [], run_untagged: true, locked: false, registered_at: '', ...extra,
});

describe('config file', () => {
  it('writes runner.json with mode 0600 and reads it back', () => {
    const file = join(tmp(), 'cfg', 'runner.json');
    expect(loadConfig(file)).toEqual(emptyConfig());
    const config = addRunner(emptyConfig(), entry('tok-1', { tags: ['a', 'b'] }));
    saveConfig(file, config);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(loadConfig(file)).toEqual(config);
  });

  it('adds (replacing the same token) and removes runners', () => {
    let c = addRunner(emptyConfig(), entry('a'));
    c = addRunner(c, entry('b'));
    c = addRunner(c, entry('a', { description: 'again' }));
    expect(c.runners.map((r) => [r.token, r.description])).toEqual([['b', 'r'], ['a', 'again']]);
    expect(removeRunner(c, 'b').runners.map((r) => r.token)).toEqual(['a']);
  });

  it('refuses broken files with the field named', () => {
    const file = join(tmp(), 'runner.json');
    writeFileSync(file, '{oops');
    expect(() => loadConfig(file)).toThrow(/not valid JSON/);
    expect(() => validateConfig('f', { concurrent: 0 })).toThrow(/concurrent/);
    expect(() => validateConfig('f', { runners: [{ url: 'ftp://x', token: 't' }] })).toThrow(/runners\[0\]\.url/);
    expect(() => validateConfig('f', { runners: [{ url: 'http://x' }] })).toThrow(/token/);
    expect(validateConfig('f', { runners: [{ url: 'http://x', token: 't' }] }).runners[0]).toMatchObject({ id: null, tags: [], run_untagged: true, locked: false });
  });

  it('parses tag lists and builds the runner API base URL like GitLab Runner', () => {
    expect(parseTagList(' a, b,,a ,c')).toEqual(['a', 'b', 'c']);
    expect(parseTagList(undefined)).toEqual([]);
    expect(ciApiBase('http://h:1/')).toBe('http://h:1/ci/api/v1');
    expect(ciApiBase('http://h:1/ci')).toBe('http://h:1/ci/api/v1');
    expect(ciApiBase('https://h/gitlab/')).toBe('https://h/gitlab/ci/api/v1');
    expect(() => ciApiBase('ftp://h')).toThrow(/http/);
    expect(() => ciApiBase('nope')).toThrow(/invalid URL/);
  });
});

const payload = (extra: Partial<BuildPayload> = {}): BuildPayload => ({
  id: 7, token: 'btok', repo_url: 'http://gitlab-ci-token:btok@127.0.0.1:9/group/sub/project.git', sha: 'a'.repeat(40), ref: 'master', commands: 'true',
  project_id: 3, ...extra,
});

describe('build environment and paths', () => {
  it('names the project dir after the repo URL path, never climbing out', () => {
    expect(projectDirName('http://u:p@h:1/group/sub/project.git', 1)).toBe('group/sub/project');
    expect(projectDirName('http://h/../../etc/x.git', 1)).toBe('etc/x');
    expect(projectDirName('/local/path', 5)).toBe('project-5');
    expect(runnerDirName({ id: 12, token: 'abcdefghijk' })).toBe('12');
    expect(runnerDirName({ id: null, token: 'abcdefghijk' })).toBe('abcdefgh');
    expect(cleanUrl('http://gitlab-ci-token:secret@h/g/p.git')).toBe('http://h/g/p.git');
  });

  it('puts the runner defaults first and the server variables after them (last wins), file variables as paths', () => {
    const dir = tmp();
    const { vars, files } = buildVariables(payload({
      variables: [
        { key: 'CI_SERVER_NAME', value: 'Gantry', public: true },
        { key: 'SECRET_FILE', value: 'contents', public: false, file: true },
        { key: 'bad key', value: 'x', public: true },
      ],
    }), '/builds/3/p', dir);
    expect(variable(vars, 'CI_BUILD_ID')).toBe('7');
    expect(variable(vars, 'CI_PROJECT_DIR')).toBe('/builds/3/p');
    expect(variable(vars, 'CI_BUILD_BEFORE_SHA')).toBe('0'.repeat(40));
    expect(variable(vars, 'CI_SERVER_NAME')).toBe('Gantry');
    expect(variable(vars, 'SECRET_FILE')).toBe(join(dir, 'SECRET_FILE'));
    expect(files).toEqual([{ path: join(dir, 'SECRET_FILE'), content: 'contents' }]);
    expect(vars.find(([k]) => k === 'bad key')).toBeUndefined();
    const env = processEnvironment({ PATH: '/bin', GANTRY_TOKEN: 'x', CI: 'no' }, vars);
    expect(env.PATH).toBe('/bin');
    expect(env.GANTRY_TOKEN).toBeUndefined();
    expect(env.CI).toBe('true');
  });

  it('chooses the git strategy and depth', () => {
    expect(gitStrategy(payload({ allow_git_fetch: true }), undefined)).toBe('fetch');
    expect(gitStrategy(payload({ allow_git_fetch: false }), undefined)).toBe('clone');
    expect(gitStrategy(payload({ allow_git_fetch: true }), 'none')).toBe('none');
    expect(gitStrategy(payload(), 'bogus')).toBe('clone');
    expect(gitDepth('3')).toBe(3);
    expect(gitDepth('0')).toBeNull();
    expect(gitDepth(undefined)).toBeNull();
  });
});

describe('artifacts paths', () => {
  it('matches globs like the runner', () => {
    expect(globToRegExp('*.txt').test('a.txt')).toBe(true);
    expect(globToRegExp('*.txt').test('d/a.txt')).toBe(false);
    expect(globToRegExp('**/*.txt').test('d/e/a.txt')).toBe(true);
    expect(globToRegExp('**/*.txt').test('a.txt')).toBe(true);
    expect(globToRegExp('out/?.[ab]').test('out/x.b')).toBe(true);
    expect(globToRegExp('out/?.[ab]').test('out/x.c')).toBe(false);
    expect(globToRegExp('a+b(1).txt').test('a+b(1).txt')).toBe(true);
  });

  it('expands paths and globs in the project dir and refuses paths outside it', () => {
    const dir = tmp();
    mkdirSync(join(dir, 'out', 'deep'), { recursive: true });
    writeFileSync(join(dir, 'out', 'a.txt'), 'a');
    writeFileSync(join(dir, 'out', 'deep', 'b.txt'), 'b');
    writeFileSync(join(dir, 'top.log'), 'l');
    mkdirSync(join(dir, '.git'));
    writeFileSync(join(dir, '.git', 'x.txt'), 'x');
    const m = matchArtifactPaths(dir, ['out/', '*.log', '**/*.txt', 'missing', '../etc']);
    expect(m[0].matches).toEqual(['out']);
    expect(m[0].files).toBe(2); // the trace says "out/: found 2 matching files", not 1 (the directory)
    expect(m[1].matches).toEqual(['top.log']);
    expect(m[1].files).toBe(1);
    expect(m[2].matches).toEqual(['out/a.txt', 'out/deep/b.txt']);
    expect(m[2].files).toBe(2);
    expect(matchArtifactPaths(dir, ['out/**'])[0].files).toBe(2);
    expect(m[3].matches).toEqual([]);
    expect(m[4].error).toMatch(/outside/);
    expect(normaliseArtifactPath('./a/../b/')).toBe('b');
    expect(normaliseArtifactPath('/etc/passwd')).toBeNull();
    expect(dedupePaths(['out', 'out/a.txt', 'top.log', 'out'])).toEqual(['out', 'top.log']);
  });

  it('names the archive and follows artifacts:when', () => {
    expect(archiveName(undefined)).toBe('artifacts.tar.gz');
    expect(archiveName({ name: 'my build' })).toBe('my build.tar.gz');
    expect(archiveName({ name: '../x/..' })).toBe('artifacts.tar.gz');
    const paths = { paths: ['a'] };
    expect(shouldUpload(paths, true)).toBe(true);
    expect(shouldUpload(paths, false)).toBe(false);
    expect(shouldUpload({ ...paths, when: 'on_failure' }, false)).toBe(true);
    expect(shouldUpload({ ...paths, when: 'on_failure' }, true)).toBe(false);
    expect(shouldUpload({ ...paths, when: 'always' }, false)).toBe(true);
    expect(shouldUpload({ paths: [] }, true)).toBe(false);
    expect(shouldUpload({ untracked: true }, true)).toBe(true);
    expect(shouldUpload(null, true)).toBe(false);
  });
});

describe('polling backoff and log lines', () => {
  it('doubles from 0.5 s to 5 s while idle and restarts after a build', () => {
    const b = new Backoff();
    expect([b.next(), b.next(), b.next(), b.next(), b.next(), b.next()]).toEqual([500, 1000, 2000, 4000, 5000, 5000]);
    b.reset();
    expect(b.next()).toBe(500);
  });

  it('formats log lines with quoted fields', () => {
    expect(formatLine('info', 'build started', { build: 3, dir: '/a b' }, new Date(0))).toBe('1970-01-01T00:00:00.000Z INFO  build started build=3 dir="/a b"');
  });
});
