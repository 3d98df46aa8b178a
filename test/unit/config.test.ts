import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, DEFAULT_LIMITS, parseSize, resolveConfig } from '../../daemon/config.js';

const sshDefaults = (host: string) => ({ port: 2222, portGiven: false, host, hostGiven: false, externalHost: null, externalPort: null });

describe('resolveConfig', () => {
  it('uses the documented defaults', () => {
    expect(resolveConfig({}, {})).toEqual({
      host: '127.0.0.1', port: 3080, dataDir: join(homedir(), '.local/share/gantry'), externalUrl: null,
      rootPassword: null, runnersToken: null, logLevel: 'info', ssh: sshDefaults('127.0.0.1'), limits: DEFAULT_LIMITS, metricsToken: null, databaseUrl: null, trustedProxies: [], runnerLongPollSeconds: 10,
    });
  });

  it('reads every GANTRY_* variable', () => {
    const c = resolveConfig({}, {
      GANTRY_HOST: '0.0.0.0', GANTRY_PORT: '8080', GANTRY_DATA_DIR: '/tmp/g', GANTRY_EXTERNAL_URL: 'https://git.example.com/',
      GANTRY_ROOT_PASSWORD: 'pw-from-env', GANTRY_RUNNERS_TOKEN: 'rt-env', GANTRY_LOG_LEVEL: 'debug',
    });
    expect(c).toEqual({
      host: '0.0.0.0', port: 8080, dataDir: '/tmp/g', externalUrl: 'https://git.example.com', rootPassword: 'pw-from-env',
      runnersToken: 'rt-env', logLevel: 'debug', ssh: sshDefaults('0.0.0.0'), limits: DEFAULT_LIMITS, metricsToken: null, databaseUrl: null, trustedProxies: [], runnerLongPollSeconds: 10,
    });
  });

  it('flags win over the environment', () => {
    const env = {
      GANTRY_HOST: 'envhost', GANTRY_PORT: '1111', GANTRY_DATA_DIR: '/env', GANTRY_EXTERNAL_URL: 'http://env.example',
      GANTRY_ROOT_PASSWORD: 'env-password', GANTRY_RUNNERS_TOKEN: 'env-token', GANTRY_LOG_LEVEL: 'warn',
    };
    const c = resolveConfig({
      host: '::1', port: '0', dataDir: 'rel/dir', externalUrl: 'http://flag.example:8080', rootPassword: 'flag-password',
      runnersToken: 'flag-token', logLevel: 'silent',
    }, env);
    expect(c).toEqual({
      host: '::1', port: 0, dataDir: resolve('rel/dir'), externalUrl: 'http://flag.example:8080', rootPassword: 'flag-password',
      runnersToken: 'flag-token', logLevel: 'silent', ssh: sshDefaults('::1'), limits: DEFAULT_LIMITS, metricsToken: null, databaseUrl: null, trustedProxies: [], runnerLongPollSeconds: 10,
    });
  });

  it('treats empty values as unset', () => {
    const c = resolveConfig({ port: '' }, { GANTRY_PORT: '', GANTRY_HOST: ' ', GANTRY_RUNNERS_TOKEN: '', GANTRY_ROOT_PASSWORD: '', GANTRY_EXTERNAL_URL: '' });
    expect(c).toMatchObject({ port: 3080, host: '127.0.0.1', runnersToken: null, rootPassword: null, externalUrl: null });
  });

  it('rejects an invalid port with a ConfigError naming it', () => {
    for (const port of ['abc', '-1', '65536', '80.5', '8o', '1e3', '99999999']) {
      expect(() => resolveConfig({ port }, {}), port).toThrow(ConfigError);
      expect(() => resolveConfig({}, { GANTRY_PORT: port }), port).toThrow(/invalid port/);
    }
    expect(resolveConfig({ port: '65535' }, {}).port).toBe(65535);
  });

  it('rejects a bad external URL or log level', () => {
    for (const url of ['example.com', 'ftp://example.com', 'http://', 'https://x.example/?q=1']) {
      expect(() => resolveConfig({ externalUrl: url }, {}), url).toThrow(ConfigError);
    }
    expect(resolveConfig({ externalUrl: 'https://x.example/gantry/' }, {}).externalUrl).toBe('https://x.example/gantry');
    expect(() => resolveConfig({ logLevel: 'loud' }, {})).toThrow(ConfigError);
    expect(resolveConfig({ logLevel: 'WARN' }, {}).logLevel).toBe('warn');
  });

  it('reads the limits and the metrics token from flags and the environment', () => {
    const c = resolveConfig({ maxBodySize: '2m', signinMaxFailures: '5', metricsToken: 'scrape-secret' }, {
      GANTRY_MAX_BODY_SIZE: '99m', GANTRY_MAX_PUSH_SIZE: '1g', GANTRY_SIGNIN_FIND_TIME: '30', GANTRY_SIGNIN_BAN_TIME: '120',
      GANTRY_SIGNIN_LOCK_TIME: '90', GANTRY_SIGNIN_TRUSTED_ADDRESSES: '10.0.0.1, ::1', GANTRY_METRICS_TOKEN: 'env-secret',
    });
    expect(c.limits).toEqual({
      maxBodyBytes: 2 * 1024 * 1024, maxPushBytes: 1024 ** 3,
      signIn: { maxFailures: 5, findTimeSeconds: 30, banTimeSeconds: 120, lockTimeSeconds: 90, trustedAddresses: ['10.0.0.1', '::1'] },
    });
    expect(c.metricsToken).toBe('scrape-secret');
    expect(resolveConfig({ signinTrustedAddresses: 'none' }, {}).limits.signIn.trustedAddresses).toEqual([]);
  });

  it('parses sizes with binary units and rejects bad limits with a ConfigError', () => {
    expect([parseSize('512'), parseSize('1k'), parseSize('10MiB'), parseSize('2 g'), parseSize('0')]).toEqual([512, 1024, 10 * 1024 ** 2, 2 * 1024 ** 3, 0]);
    for (const bad of ['ten', '1.5m', '-1', '10x']) expect(parseSize(bad), bad).toBeNull();
    expect(() => resolveConfig({ maxBodySize: 'lots' }, {})).toThrow(/invalid --max-body-size "lots"/);
    expect(() => resolveConfig({ maxBodySize: '100' }, {})).toThrow(/at least 1k/);
    expect(() => resolveConfig({}, { GANTRY_SIGNIN_MAX_FAILURES: '-3' })).toThrow(/invalid --signin-max-failures/);
  });

  it('reads the SSH server settings: port (0, off), host, external host and port', () => {
    expect(resolveConfig({ sshPort: 'off' }, { GANTRY_SSH_PORT: '2200' }).ssh.port).toBeNull();
    expect(resolveConfig({}, { GANTRY_SSH_PORT: 'OFF' }).ssh).toMatchObject({ port: null, portGiven: true });
    expect(resolveConfig({ sshPort: '0' }, {}).ssh).toMatchObject({ port: 0, portGiven: true });
    const c = resolveConfig({ host: '0.0.0.0', sshHost: '10.1.2.3', sshExternalPort: '22' }, {
      GANTRY_SSH_PORT: '2200', GANTRY_SSH_HOST: '10.9.9.9', GANTRY_SSH_EXTERNAL_HOST: 'git.example.com', GANTRY_SSH_EXTERNAL_PORT: '2022',
    });
    expect(c.ssh).toEqual({ port: 2200, portGiven: true, host: '10.1.2.3', hostGiven: true, externalHost: 'git.example.com', externalPort: 22 });
    for (const sshPort of ['no', '-1', '65536', '22.5']) expect(() => resolveConfig({ sshPort }, {}), sshPort).toThrow(/invalid SSH port .* or off for no SSH server/);
    expect(() => resolveConfig({ sshExternalPort: '0' }, {})).toThrow(/invalid SSH external port "0": use a number from 1 to 65535/);
    expect(() => resolveConfig({ sshExternalHost: 'git@example.com' }, {})).toThrow(/invalid SSH external host/);
  });

  it('reads the trusted proxies (addresses and CIDRs, or none) and rejects anything else with a ConfigError', () => {
    expect(resolveConfig({}, { GANTRY_TRUSTED_PROXIES: '10.0.0.5, 10.1.0.0/16,fd00::/8 ::1' }).trustedProxies).toEqual(['10.0.0.5', '10.1.0.0/16', 'fd00::/8', '::1']);
    expect(resolveConfig({ trustedProxies: '192.168.1.1' }, { GANTRY_TRUSTED_PROXIES: '10.0.0.5' }).trustedProxies).toEqual(['192.168.1.1']);
    expect(resolveConfig({ trustedProxies: 'none' }, { GANTRY_TRUSTED_PROXIES: '10.0.0.5' }).trustedProxies).toEqual([]);
    for (const bad of ['balancer.local', '10.0.0.0/33', '10.0.0.0/', 'fd00::/129', '10.0.0.256', '10.0.0.0/8/8', '10.0.0.0/-1']) {
      expect(() => resolveConfig({ trustedProxies: bad }, {}), bad).toThrow(ConfigError);
      expect(() => resolveConfig({ trustedProxies: `10.0.0.1,${bad}` }, {}), bad).toThrow(`invalid trusted proxy "${bad}"`);
    }
  });

  it('reads a PostgreSQL database URL from --database-url or GANTRY_DATABASE_URL, and nothing else', () => {
    expect(resolveConfig({}, { GANTRY_DATABASE_URL: 'postgres://g:pw@db:5432/gantry' }).databaseUrl).toBe('postgres://g:pw@db:5432/gantry');
    expect(resolveConfig({ databaseUrl: 'postgresql://db/gantry' }, { GANTRY_DATABASE_URL: 'postgres://other/x' }).databaseUrl).toBe('postgresql://db/gantry');
    expect(resolveConfig({}, { GANTRY_DATABASE_URL: '' }).databaseUrl).toBeNull();
    for (const bad of ['mysql://db/gantry', 'sqlite:///var/lib/gantry.db', '/var/lib/gantry.db', 'db:5432']) {
      expect(() => resolveConfig({ databaseUrl: bad }, {}), bad).toThrow(ConfigError);
      expect(() => resolveConfig({ databaseUrl: bad }, {}), bad).toThrow(/use a PostgreSQL URL such as postgres:\/\/user:password@host:5432\/gantry/);
    }
    // The message never repeats a password.
    expect(() => resolveConfig({ databaseUrl: 'mysql://u:secret@db/x' }, {})).toThrow(/^(?!.*secret)/);
  });
  it('--runner-long-poll: seconds from 0 to 60 (default 10); anything else names the flag', () => {
    expect(resolveConfig({}, {}).runnerLongPollSeconds).toBe(10);
    expect(resolveConfig({}, { GANTRY_RUNNER_LONG_POLL: '0' }).runnerLongPollSeconds).toBe(0);
    expect(resolveConfig({ runnerLongPoll: '60' }, { GANTRY_RUNNER_LONG_POLL: '5' }).runnerLongPollSeconds).toBe(60);
    for (const bad of ['61', '-1', '1.5', 'soon']) {
      expect(() => resolveConfig({ runnerLongPoll: bad }, {})).toThrow(/invalid --runner-long-poll/);
    }
  });
});
