/** Pure parts of the CLI: rendering, error text, query strings, connection resolution, setting values, config files. */
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cellText, renderRecord, renderTable } from '../../cli/output.js';
import { resolveConnection } from '../../cli/client.js';
import { CliError, UsageError } from '../../cli/errors.js';
import { settingValue } from '../../cli/commands/settings.js';
import { idOrPath, visibilityLevel } from '../../cli/commands/common.js';
import { normaliseUrl, type CliConfig } from '../../cli/profiles.js';
import { configDir, writePrivateJsonFile } from '../../shared/config-dir.js';
import { errorText, queryString } from '../../shared/http.js';

describe('output', () => {
  it('aligns table columns under upper-case headers and does not pad the last column', () => {
    const text = renderTable([{ id: 1, path: 'root/a', d: 'x' }, { id: 22, path: 'g/long-name', d: null }], [
      { header: 'id', value: (r) => r.id },
      { header: 'path', value: (r) => r.path },
      { header: 'description', value: (r) => r.d },
    ]);
    expect(text).toBe('ID  PATH         DESCRIPTION\n1   root/a       x\n22  g/long-name\n');
  });
  it('renders cells on one line, booleans as yes/no, long text cut', () => {
    expect(cellText(true)).toBe('yes');
    expect(cellText(['a', 'b'])).toBe('a, b');
    expect(cellText('two\nlines')).toBe('two lines');
    expect(cellText('abcdefghij', 5)).toBe('abcd…');
    expect(cellText(null)).toBe('');
  });
  it('renders records with aligned keys', () => {
    expect(renderRecord([['id', 1], ['web url', 'http://x']])).toBe('id:      1\nweb url: http://x\n');
  });
});

describe('API error text and query strings', () => {
  it('turns message strings, validation hashes and error arrays into one line', () => {
    expect(errorText({ message: '404 Project Not Found' })).toBe('404 Project Not Found');
    expect(errorText({ message: { name: ['has already been taken'], path: ['is too short', 'is invalid'] } }))
      .toBe('name: has already been taken; path: is too short, is invalid');
    expect(errorText({ error: ['over the limit'] })).toBe('over the limit');
    expect(errorText(null)).toBeNull();
  });
  it('builds query strings, leaving out unset values and repeating arrays', () => {
    expect(queryString({ a: 1, b: undefined, c: null, d: true, scope: ['x', 'y'] })).toBe('?a=1&d=true&scope%5B%5D=x&scope%5B%5D=y');
    expect(queryString({})).toBe('');
  });
  it('encodes namespace/path ids', () => {
    expect(idOrPath('group/sub project')).toBe('group%2Fsub%20project');
    expect(idOrPath('42')).toBe('42');
    expect(visibilityLevel('Public')).toBe(20);
    expect(() => visibilityLevel('secret')).toThrow();
  });
});

describe('resolveConnection', () => {
  const config: CliConfig = {
    active: 'default',
    profiles: { default: { url: 'http://a:3080', token: 'ta' }, work: { url: 'https://w.example.com/', token: 'tw' } },
  };
  it('uses the active profile, or the one named by --profile / GANTRY_PROFILE', () => {
    expect(resolveConnection({}, {}, config)).toEqual({ url: 'http://a:3080', token: 'ta', profile: 'default' });
    expect(resolveConnection({ profile: 'work' }, {}, config)).toEqual({ url: 'https://w.example.com', token: 'tw', profile: 'work' });
    expect(resolveConnection({}, { GANTRY_PROFILE: 'work' }, config).token).toBe('tw');
  });
  it('lets flags win over the environment, which wins over the profile', () => {
    expect(resolveConnection({ token: 'flag' }, { GANTRY_TOKEN: 'env' }, config).token).toBe('flag');
    expect(resolveConnection({}, { GANTRY_TOKEN: 'env' }, config).token).toBe('env');
    expect(resolveConnection({ url: 'http://b', token: 't' }, { GANTRY_URL: 'http://c' }, config).url).toBe('http://b');
  });
  it('never sends a profile token to another server', () => {
    expect(() => resolveConnection({ url: 'http://other' }, {}, config)).toThrow(/no token for http:\/\/other/);
    expect(resolveConnection({ url: 'http://a:3080/' }, {}, config).token).toBe('ta');
  });
  it('explains what is missing', () => {
    expect(() => resolveConnection({}, {}, { active: null, profiles: {} })).toThrow(CliError);
    expect(() => resolveConnection({ profile: 'nope' }, {}, config)).toThrow(UsageError);
  });
  it('normalises URLs', () => {
    expect(normaliseUrl(' http://x:1/api/v3/ ')).toBe('http://x:1');
  });
});

describe('settingValue', () => {
  it('converts to the current type of the setting', () => {
    expect(settingValue('signup_enabled', 'no', true)).toBe(false);
    expect(settingValue('default_projects_limit', '15', 10)).toBe(15);
    expect(settingValue('domain_whitelist', 'a.com, b.com', [])).toEqual(['a.com', 'b.com']);
    expect(settingValue('restricted_visibility_levels', '0,20', null)).toEqual([0, 20]);
    expect(settingValue('home_page_url', 'null', 'x')).toBeNull();
    expect(settingValue('sign_in_text', 'hello', null)).toBe('hello');
    expect(() => settingValue('signup_enabled', 'maybe', true)).toThrow(UsageError);
    expect(() => settingValue('default_projects_limit', '1.5', 10)).toThrow(UsageError);
  });
});

describe('config dir', () => {
  it('honours GANTRY_CONFIG_DIR, then XDG_CONFIG_HOME, then ~/.config', () => {
    expect(configDir({ GANTRY_CONFIG_DIR: '/c', XDG_CONFIG_HOME: '/x', HOME: '/h' })).toBe('/c');
    expect(configDir({ XDG_CONFIG_HOME: '/x', HOME: '/h' })).toBe('/x/gantry');
    expect(configDir({ HOME: '/h' })).toBe('/h/.config/gantry');
  });
  it('writes private files (0600 in a 0700 dir), replacing them whole', () => {
    const base = mkdtempSync(join(tmpdir(), 'gantry-cfg-unit-'));
    try {
      const file = join(base, 'deep', 'gantry', 'config.json');
      writePrivateJsonFile(file, { a: 1 });
      writePrivateJsonFile(file, { a: 2 });
      expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ a: 2 });
      expect(statSync(file).mode & 0o777).toBe(0o600);
      expect(statSync(join(base, 'deep', 'gantry')).mode & 0o777).toBe(0o700);
    } finally {
      rmSync(base, { recursive: true, force: true });
    }
  });
});

describe('gitFailureReason', () => {
  it('names git\'s fatal line and the ssh cause, never the last line of its advice', async () => {
    const { gitFailureReason } = await import('../../cli/local-git.js');
    const ssh = "Cloning into 'c'...\ngit@127.0.0.1: Permission denied (publickey).\r\nfatal: Could not read from remote repository.\n\nPlease make sure you have the correct access rights\nand the repository exists.\n";
    expect(gitFailureReason(ssh)).toBe('Could not read from remote repository. (git@127.0.0.1: Permission denied (publickey).)');
    expect(gitFailureReason("fatal: repository 'http://x/y.git/' not found\n")).toBe("repository 'http://x/y.git/' not found");
    expect(gitFailureReason('hint: do this\nerror: failed to push some refs\n')).toBe('failed to push some refs');
    expect(gitFailureReason('')).toBeNull();
  });
});
