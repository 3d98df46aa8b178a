/** The environment keyword's parse into a build's options, ExpandVariables, and Environment's validations (8.13). */
import { describe, expect, it } from 'vitest';
import { parseCiConfig } from '../../daemon/ci/config.js';
import { expandVariables } from '../../daemon/ci/variables.js';
import { environmentType, nameErrors, normalizeUrl, urlErrors } from '../../daemon/services/environments/environments.js';

const job = (yml: string, name: string) => {
  const r = parseCiConfig(yml);
  if (!r.ok) throw new Error(r.error);
  return r.config.jobs.find((j) => j.name === name)!;
};
const error = (yml: string) => {
  const r = parseCiConfig(yml);
  return r.ok ? null : r.error;
};

describe('environment keyword', () => {
  it('stores the string form as {name, action: start} and the hash form as written, in the build options', () => {
    const a = job('deploy: {script: x, environment: production}', 'deploy');
    expect(a.environment).toEqual({ name: 'production', action: 'start' });
    expect(a.options.environment).toEqual({ name: 'production', action: 'start' });
    const b = job('deploy: {script: x, environment: {name: review/$CI_BUILD_REF_NAME, url: "https://$CI_BUILD_REF_NAME.example.com"}}', 'deploy');
    expect(b.options.environment).toEqual({ name: 'review/$CI_BUILD_REF_NAME', url: 'https://$CI_BUILD_REF_NAME.example.com' });
    expect(job('deploy: {script: x}', 'deploy').options.environment).toBeUndefined();
  });

  it("answers 8.13's errors for a bad value", () => {
    expect(error('deploy: {script: x, environment: [a]}')).toBe('jobs:deploy:environment config should be a hash or a string');
    expect(error('deploy: {script: x, environment: "a|b"}')).toMatch(/^jobs:deploy:environment name can contain only letters/);
    expect(error('deploy: {script: x, environment: {name: p, url: "ftp://x.org"}}')).toMatch(/^jobs:deploy:environment url must be a valid url$/i);
    expect(error('deploy: {script: x, environment: {name: p, action: start}}')).toBeNull();
  });
});

describe('expandVariables (8.13 ExpandVariables)', () => {
  const vars = [{ key: 'REF', value: 'master' }, { key: 'APP', value: 'shop' }, { key: 'APP', value: 'store' }];
  it('replaces $VAR, ${VAR} and %VAR%, the last value of a key winning, unknown names with nothing', () => {
    expect(expandVariables('review/$REF', vars)).toBe('review/master');
    expect(expandVariables('https://${REF}.%APP%.example.com', vars)).toBe('https://master.store.example.com');
    expect(expandVariables('a/$MISSING/b${ALSO_MISSING}', vars)).toBe('a//b');
    expect(expandVariables('$1 and $ and 100%', vars)).toBe('$1 and $ and 100%');
    expect(expandVariables('$REFX', vars)).toBe('');
  });
});

describe('Environment validations', () => {
  it('names: presence, length, the allowed characters; environment_type from the first path part', () => {
    expect(nameErrors('review/app-1 ${X}.v2')).toEqual([]);
    expect(nameErrors('')).toEqual(["can't be blank", "can contain only letters, digits, '-', '_', '/', '$', '{', '}', '.' and spaces"]);
    expect(nameErrors(' ')).toEqual(["can't be blank"]);
    expect(nameErrors('a'.repeat(256))).toEqual(['is too long (maximum is 255 characters)']);
    expect(nameErrors('prod|eu')).toHaveLength(1);
    expect(environmentType('review/app')).toBe('review');
    expect(environmentType('production')).toBeNull();
  });

  it('URLs: http, https, ssh or git with a host, at most 255; a blank one is none', () => {
    for (const ok of ['http://a.example.com', 'https://a.example.com/path?q=1', 'ssh://git@host:22/x', 'git://host/repo']) expect(urlErrors(ok)).toEqual([]);
    for (const bad of ['test.gitlab.com', 'ftp://files', 'https://', 'javascript:alert(1)', 'https://a\0b', 'https://a.com/\x7f']) expect(urlErrors(bad)).toEqual(['must be a valid URL']);
    expect(urlErrors(`https://${'a'.repeat(252)}`)).toEqual(['is too long (maximum is 255 characters)']);
    expect(normalizeUrl('  ')).toBeNull();
    expect(normalizeUrl(undefined)).toBeNull();
    expect(normalizeUrl('https://x')).toBe('https://x');
  });
});
