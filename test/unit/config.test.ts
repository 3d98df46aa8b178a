import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, resolveConfig } from '../../daemon/config.js';

describe('resolveConfig', () => {
  it('uses the documented defaults', () => {
    expect(resolveConfig({}, {})).toEqual({
      host: '127.0.0.1', port: 3080, dataDir: join(homedir(), '.local/share/gantry'), externalUrl: null,
      rootPassword: null, runnersToken: null, logLevel: 'info',
    });
  });

  it('reads every GANTRY_* variable', () => {
    const c = resolveConfig({}, {
      GANTRY_HOST: '0.0.0.0', GANTRY_PORT: '8080', GANTRY_DATA_DIR: '/tmp/g', GANTRY_EXTERNAL_URL: 'https://git.example.com/',
      GANTRY_ROOT_PASSWORD: 'pw-from-env', GANTRY_RUNNERS_TOKEN: 'rt-env', GANTRY_LOG_LEVEL: 'debug',
    });
    expect(c).toEqual({
      host: '0.0.0.0', port: 8080, dataDir: '/tmp/g', externalUrl: 'https://git.example.com', rootPassword: 'pw-from-env',
      runnersToken: 'rt-env', logLevel: 'debug',
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
      runnersToken: 'flag-token', logLevel: 'silent',
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
});
