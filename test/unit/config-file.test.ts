/**
 * gantryd's config file (issue 25, item 3): YAML at `<data-dir>/gantry.yml` or `--config <file>`; flags win over the
 * environment, which wins over the file, which wins over the defaults; unknown keys and bad values are errors naming
 * the file and the key; `--print-config` shows each effective value and where it came from.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, SETTINGS, loadConfig, printableConfig, readConfigFile } from '../../daemon/config.js';

const dirs: string[] = [];
const tmp = () => {
  const d = mkdtempSync(join(tmpdir(), 'gantry-config-file-'));
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A file with `text` in a new directory; its path. */
function file(text: string, name = 'gantry.yml'): string {
  const path = join(tmp(), name);
  writeFileSync(path, text);
  return path;
}

function configError(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    return (e as Error).message;
  }
  throw new Error('no ConfigError');
}

describe('the config file', () => {
  it('sets every setting, lists included, and the values reach the configuration', () => {
    const path = file([
      'host: 0.0.0.0', 'port: 4000', 'data-dir: /srv/gantry', 'external-url: https://git.example.com/', 'root-password: "s3cret "',
      'runners-token: rt', 'log-level: warn', 'ssh-port: 2322', 'ssh-host: 127.0.0.2', 'ssh-external-host: git.example.com',
      'ssh-external-port: 22', 'max-body-size: 1m', 'max-push-size: 2g', 'signin-max-failures: 5', 'signin-find-time: 30',
      'signin-ban-time: 60', 'signin-lock-time: 90', 'signin-trusted-addresses: [10.0.0.1, "::1"]',
      'trusted-proxies:', '  - 10.0.0.5', '  - 10.1.0.0/16', 'metrics-token: mt', 'database-url: postgres://u:p@db:5432/gantry',
      'runner-long-poll: 25',
    ].join('\n'));
    const { config, file: used, sources } = loadConfig({ config: path }, {});
    expect(used).toBe(path);
    expect(config).toMatchObject({
      host: '0.0.0.0', port: 4000, dataDir: '/srv/gantry', externalUrl: 'https://git.example.com', rootPassword: 's3cret ',
      runnersToken: 'rt', logLevel: 'warn', metricsToken: 'mt', databaseUrl: 'postgres://u:p@db:5432/gantry',
      trustedProxies: ['10.0.0.5', '10.1.0.0/16'], runnerLongPollSeconds: 25,
      ssh: { port: 2322, portGiven: true, host: '127.0.0.2', hostGiven: true, externalHost: 'git.example.com', externalPort: 22 },
      limits: {
        maxBodyBytes: 1024 ** 2, maxPushBytes: 2 * 1024 ** 3,
        signIn: { maxFailures: 5, findTimeSeconds: 30, banTimeSeconds: 60, lockTimeSeconds: 90, trustedAddresses: ['10.0.0.1', '::1'] },
      },
    });
    // every setting of gantryd came from the file
    expect(SETTINGS.filter((s) => sources.get(s.key) !== 'file').map((s) => s.key)).toEqual([]);
  });

  it('flags win over the environment, the environment over the file, the file over the defaults', () => {
    const path = file('port: 4000\nhost: 10.9.9.9\nlog-level: debug\nssh-port: 2322\n');
    const loaded = loadConfig({ config: path, port: '5000' }, { GANTRY_PORT: '6000', GANTRY_HOST: '127.0.0.3' });
    expect(loaded.config).toMatchObject({ port: 5000, host: '127.0.0.3', logLevel: 'debug', ssh: { port: 2322 } });
    expect(loaded.config.externalUrl).toBeNull();
    expect(Object.fromEntries(['port', 'host', 'log-level', 'external-url'].map((k) => [k, loaded.sources.get(k)])))
      .toEqual({ port: 'flag', host: 'environment', 'log-level': 'file', 'external-url': 'default' });
  });

  it('reads <data-dir>/gantry.yml without --config, and ignores a data-dir inside it', () => {
    const dataDir = tmp();
    writeFileSync(join(dataDir, 'gantry.yml'), 'data-dir: /elsewhere\nssh-port: "off"\n');
    const loaded = loadConfig({ dataDir }, {});
    expect(loaded.file).toBe(join(dataDir, 'gantry.yml'));
    expect(loaded.config.dataDir).toBe(dataDir);
    expect(loaded.config.ssh.port).toBeNull();
    // through GANTRY_DATA_DIR as well; and a data dir with no file uses the defaults
    expect(loadConfig({}, { GANTRY_DATA_DIR: dataDir }).config.ssh.port).toBeNull();
    const empty = loadConfig({ dataDir: tmp() }, {});
    expect(empty.file).toBeNull();
    expect(empty.config.ssh.port).toBe(2222);
  });

  it('a relative data-dir in a --config file is relative to the file', () => {
    const path = file('data-dir: data\n');
    expect(loadConfig({ config: path }, {}).config.dataDir).toBe(join(path, '..', 'data'));
  });

  it('GANTRY_CONFIG names the file too; a named file that does not exist is an error', () => {
    const path = file('port: 4100\n');
    expect(loadConfig({}, { GANTRY_CONFIG: path }).config.port).toBe(4100);
    expect(configError(() => loadConfig({ config: join(tmp(), 'missing.yml') }, {}))).toMatch(/cannot read the config file .*missing\.yml: ENOENT/);
  });

  it('an empty file is no settings; `ssh-port: off` and `ssh-port: false` both switch SSH off', () => {
    expect(readConfigFile(file(''), true)).toEqual({ path: expect.any(String), values: {} });
    expect(loadConfig({ config: file('ssh-port: off\n') }, {}).config.ssh.port).toBeNull();
    expect(loadConfig({ config: file('ssh-port: false\n') }, {}).config.ssh.port).toBeNull();
  });

  it('names the file and the key of an unknown key or a bad value', () => {
    const unknown = file('port: 3080\nsshport: 2322\n');
    expect(configError(() => loadConfig({ config: unknown }, {}))).toMatch(new RegExp(`^${unknown}: unknown key "sshport"; .*ssh-port`));
    const badPort = file('port: 99999\n');
    expect(configError(() => loadConfig({ config: badPort }, {}))).toBe(`${badPort}: key "port": invalid port "99999": use a number from 0 to 65535 (0 picks a free port)`);
    const badUrl = file('external-url: ftp://x\n');
    expect(configError(() => loadConfig({ config: badUrl }, {}))).toMatch(new RegExp(`^${badUrl}: key "external-url": invalid external URL`));
    const nested = file('host:\n  name: x\n');
    expect(configError(() => loadConfig({ config: nested }, {}))).toMatch(new RegExp(`^${nested}: key "host": expected a single value`));
    const list = file('- port\n');
    expect(configError(() => loadConfig({ config: list }, {}))).toMatch(/expected a mapping of settings/);
    const broken = file('port: [3080\n');
    expect(configError(() => loadConfig({ config: broken }, {}))).toMatch(new RegExp(`^${broken}: not valid YAML`));
    const twice = file('port: 1\nport: 2\n');
    expect(configError(() => loadConfig({ config: twice }, {}))).toMatch(/not valid YAML/);
    // a bad value in the data dir's own file is reported the same way
    const dataDir = tmp();
    writeFileSync(join(dataDir, 'gantry.yml'), 'signin-ban-time: soon\n');
    expect(configError(() => loadConfig({ dataDir }, {}))).toBe(`${join(dataDir, 'gantry.yml')}: key "signin-ban-time": invalid --signin-ban-time "soon": use a whole number such as 3600`);
  });

  it('a bad value in the file is reported even when a flag overrides it', () => {
    const path = file('port: none\n');
    expect(configError(() => loadConfig({ config: path, port: '3000' }, {}))).toMatch(/key "port"/);
  });

  it('--print-config shows each value and its source, never a secret', () => {
    const path = file('runners-token: file-token\nssh-port: 2322\nmetrics-token: m\n');
    const text = printableConfig(loadConfig({ config: path, port: '0' }, { GANTRY_LOG_LEVEL: 'warn', GANTRY_ROOT_PASSWORD: 'pw' }));
    const lines = text.trimEnd().split('\n');
    expect(lines[0]).toBe(`# config file: ${path}`);
    expect(lines).toHaveLength(SETTINGS.length + 1);
    const line = (key: string) => lines.find((l) => l.startsWith(`${key}:`))!.replace(/\s+/g, ' ');
    expect(line('port')).toBe('port: 0 # flag');
    expect(line('log-level')).toBe('log-level: warn # environment GANTRY_LOG_LEVEL');
    expect(line('ssh-port')).toBe(`ssh-port: 2322 # file ${path}`);
    expect(line('host')).toBe('host: 127.0.0.1 # default');
    expect(line('runners-token')).toBe(`runners-token: (set) # file ${path}`);
    expect(line('root-password')).toBe('root-password: (set) # environment GANTRY_ROOT_PASSWORD');
    expect(line('database-url')).toBe('database-url: (unset) # default');
    expect(text).not.toContain('file-token');
    expect(text).not.toContain('pw');
  });
});
