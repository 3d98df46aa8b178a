import { describe, expect, it } from 'vitest';
import { jobMatchesRef, type RefContext } from '../../daemon/ci/refs.js';
import { parseDuration } from '../../daemon/ci/duration.js';
import { regExpFromLiteral, rubyRegExp, safeLastMatch, safeTest } from '../../daemon/ci/ruby-regexp.js';

const branch = (ref: string, extra: Partial<RefContext> = {}): RefContext => ({ ref, tag: false, source: 'push', projectPath: 'group/project', ...extra });
const tag = (ref: string, extra: Partial<RefContext> = {}): RefContext => ({ ref, tag: true, source: 'push', projectPath: 'group/project', ...extra });

describe('jobMatchesRef', () => {
  it('matches every ref without filters (tags and triggers included)', () => {
    for (const ctx of [branch('master'), tag('v1.0'), branch('feature', { source: 'trigger' }), branch('x', { source: 'api' })]) {
      expect(jobMatchesRef({}, ctx)).toBe(true);
      expect(jobMatchesRef({ only: [], except: [] }, ctx)).toBe(true);
    }
  });

  // [label, only, except, ctx, expected]
  const matrix: [string, string[] | undefined, string[] | undefined, RefContext, boolean][] = [
    ['only other branch', ['deploy'], undefined, branch('master'), false],
    ['only this branch', ['master'], undefined, branch('master'), true],
    ['only list incl. branch', ['master', 'deploy'], undefined, branch('deploy'), true],
    ['only regexp other', ['/^deploy$/'], undefined, branch('master'), false],
    ['only regexp match (unanchored)', ['/release/'], undefined, branch('pre-release-1'), true],
    ['only regexp with i flag', ['/^RELEASE-/i'], undefined, branch('release-2'), true],
    ['only branches on branch', ['branches'], undefined, branch('deploy'), true],
    ['only branches on tag', ['branches'], undefined, tag('v1'), false],
    ['only tags on branch', ['tags'], undefined, branch('deploy'), false],
    ['only tags on tag', ['tags'], undefined, tag('v1'), true],
    ['only triggers with trigger', ['triggers'], undefined, branch('deploy', { source: 'trigger' }), true],
    ['only triggers without trigger', ['triggers'], undefined, branch('deploy'), false],
    ['only triggers from api', ['triggers'], undefined, branch('deploy', { source: 'api' }), false],
    ['only "api" is a ref name in 8.13', ['api'], undefined, branch('master', { source: 'api' }), false],
    ['only this project path', ['branches@group/project'], undefined, branch('deploy'), true],
    ['only other project path (fork)', ['branches@fork/project'], undefined, branch('deploy'), false],
    ['only path when project unknown', ['master@group/project'], undefined, branch('master', { projectPath: undefined }), false],
    ['except other branch', undefined, ['deploy'], branch('master'), true],
    ['except regexp other', undefined, ['/^deploy$/'], branch('master'), true],
    ['except this branch', undefined, ['master'], branch('master'), false],
    ['except list incl. branch', undefined, ['master', 'deploy'], branch('deploy'), false],
    ['except branches', undefined, ['branches'], branch('deploy'), false],
    ['except tags on branch', undefined, ['tags'], branch('deploy'), true],
    ['except tags on tag', undefined, ['tags'], tag('v1'), false],
    ['except triggers with trigger', undefined, ['triggers'], branch('deploy', { source: 'trigger' }), false],
    ['except triggers without trigger', undefined, ['triggers'], branch('deploy'), true],
    ['except this project path', undefined, ['branches@group/project'], branch('deploy'), false],
    ['except other project path', undefined, ['branches@fork/project'], branch('deploy'), true],
    ['except wins over only', ['branches'], ['master'], branch('master'), false],
    ['only and except both pass', ['/^feature/'], ['tags'], branch('feature-1'), true],
    ['tag name matches exact entry', ['v1.0'], undefined, tag('v1.0'), true],
  ];
  it.each(matrix)('%s', (_label, only, except, ctx, expected) => {
    expect(jobMatchesRef({ only, except }, ctx)).toBe(expected);
  });

  it('treats a runaway regexp as no match instead of hanging', () => {
    const started = Date.now();
    expect(jobMatchesRef({ only: ['/^(a+)+$/'] }, branch(`${'a'.repeat(40)}b`))).toBe(false);
    expect(Date.now() - started).toBeLessThan(2000);
  });
});

describe('parseDuration', () => {
  const valid: [string, number | null][] = [
    ['30 min', 1800],
    ['1 week', 604800],
    ['7d', 604800],
    ['2 days 4 hours', 2 * 86400 + 4 * 3600],
    ['3 hrs 4 min', 3 * 3600 + 240],
    ['3hrs4min', 3 * 3600 + 240],
    ['1 hour and 30 minutes', 5400],
    ['1.5 hours', 5400],
    ['90', 90],
    ['1:30', 90],
    ['1:00:00', 3600],
    ['week', 604800],
    ['one week', 604800],
    ['2 months', 60 * 86400],
    ['1 year', 31557600],
    ['10 Seconds', 10],
    ['never', null],
    ['Never', null],
  ];
  it.each(valid)('%s', (text, seconds) => {
    expect(parseDuration(text)).toEqual({ ok: true, seconds });
  });

  it.each(['', '   ', '7 elephants', '0', '0 days', 'soon', 'a week', '-', '1 day ago'])('rejects %j', (text) => {
    expect(parseDuration(text)).toEqual({ ok: false });
  });
});

describe('Ruby regexps', () => {
  it('translates Ruby-only syntax', () => {
    const re = (s: string, f = '') => rubyRegExp(s, f) as RegExp;
    expect(re('\\Amaster\\z').test('master')).toBe(true);
    expect(re('\\Amaster\\z').test('x\nmaster')).toBe(false);
    expect(re('^master$').test('x\nmaster')).toBe(true); // Ruby ^/$ are line anchors
    expect(re('\\h+').test('beef')).toBe(true);
    expect(re('[[:digit:]]+\\.[[:digit:]]').test('1.5')).toBe(true);
    expect(re('(?>ab)c').test('abc')).toBe(true);
    expect(re('a++b').test('aab')).toBe(true);
    expect(re('a . b # comment\n', 'x').test('a-b')).toBe(true);
    expect(re('a.b', 'm').test('a\nb')).toBe(true);
    expect(re('a.b').test('a\nb')).toBe(false);
    expect(re('MASTER', 'i').test('master')).toBe(true);
    expect(re('[]a]').test(']')).toBe(true);
  });

  it('rejects invalid or unsupported patterns', () => {
    for (const src of ['*invalid', '(', '[a', '\\', 'a\\Gb', '[a&&b]', '\\p{Alpha}']) expect(rubyRegExp(src)).toBeNull();
    expect(regExpFromLiteral('not a literal')).toBeNull();
    expect(regExpFromLiteral('/ok/')).not.toBeNull();
  });

  it('runs with a time limit', () => {
    const started = Date.now();
    expect(safeTest(/^(a+)+$/, `${'a'.repeat(40)}b`, 50)).toBeNull();
    expect(safeLastMatch(/^(a+)+$/m, `${'a'.repeat(40)}b`, 50)).toBeNull();
    expect(Date.now() - started).toBeLessThan(2000);
    expect(safeTest(/mast/, 'master')).toBe(true);
    expect(safeLastMatch(/(\d)/, 'a1b2c3')).toEqual(['3', '3']);
    expect(safeLastMatch(/x*/, 'ab')).toEqual(['']);
  });
});
