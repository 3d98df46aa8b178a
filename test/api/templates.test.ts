/**
 * File templates (8.13 lib/api/templates.rb): gitignores, gitlab_ci_ymls and licenses, lists and one by name, the
 * deprecated aliases, 8.13's 404s, the `popular` filter and the placeholders a license fills in. Public routes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer, type TestUser } from '../helpers/app.js';
import { parseCiConfig } from '../../daemon/ci/config.js';
import { GITLAB_CI_YMLS } from '../../daemon/services/templates/gitlab-ci-ymls.js';

let s: TestServer;
let user: TestUser;
const year = new Date().getUTCFullYear();

beforeAll(async () => {
  s = await startTestServer();
  user = await s.user('tmpluser', { name: 'Tess Template' });
});
afterAll(async () => {
  await s.close();
});

describe('gitignores', () => {
  it('lists the names (no content) to anyone, signed in or not, under both paths', async () => {
    for (const path of ['/templates/gitignores', '/gitignores']) {
      const r = await s.api('GET', path, null);
      expect(r.status).toBe(200);
      expect(r.body.length).toBeGreaterThan(15);
      expect(r.body).toContainEqual({ name: 'Ruby' });
      expect(Object.keys(r.body[0])).toEqual(['name']);
      expect((await s.api('GET', path, user)).body).toEqual(r.body);
    }
  });

  it('shows one by exact name (C++ URL-encoded too), 404 `gitignore Not Found` otherwise', async () => {
    const r = await s.api('GET', '/templates/gitignores/Ruby', null);
    expect(r.status).toBe(200);
    expect(r.body.name).toBe('Ruby');
    expect(r.body.content).toContain('*.gem');
    expect((await s.api('GET', '/gitignores/Ruby', user)).body).toEqual(r.body);
    expect((await s.api('GET', '/templates/gitignores/C%2B%2B', null)).body.name).toBe('C++');
    for (const name of ['Nope', 'ruby', 'toString', '__proto__']) {
      const missing = await s.api('GET', `/templates/gitignores/${name}`, null);
      expect(missing.status).toBe(404);
      expect(missing.body).toEqual({ message: '404 gitignore Not Found' });
    }
  });
});

describe('gitlab_ci_ymls', () => {
  it('lists them and shows one starting with 8.13\'s disclaimer; 404 `gitlab_ci_yml Not Found`', async () => {
    const list = await s.api('GET', '/templates/gitlab_ci_ymls', null);
    expect(list.status).toBe(200);
    expect(list.body).toContainEqual({ name: 'Ruby' });
    const ruby = await s.api('GET', '/templates/gitlab_ci_ymls/Ruby', null);
    expect(ruby.status).toBe(200);
    expect(ruby.body.content).toMatch(/^# This file is a template,/);
    expect((await s.api('GET', '/gitlab_ci_ymls/Ruby', null)).body).toEqual(ruby.body);
    const missing = await s.api('GET', '/templates/gitlab_ci_ymls/Nope', null);
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ message: '404 gitlab_ci_yml Not Found' });
  });

  it('every template is a configuration Gantry\'s CI accepts', () => {
    for (const [name, text] of Object.entries(GITLAB_CI_YMLS)) {
      const parsed = parseCiConfig(text);
      expect(parsed.ok ? name : `${name}: ${(parsed as { error: string }).error}`).toBe(name);
    }
  });
});

describe('licenses', () => {
  it('lists the 15 licenses of 8.13, and the 3 popular ones with popular=1', async () => {
    for (const path of ['/templates/licenses', '/licenses']) {
      const r = await s.api('GET', path, null);
      expect(r.status).toBe(200);
      expect(r.body.map((l: { key: string }) => l.key)).toEqual([
        'agpl-3.0', 'apache-2.0', 'artistic-2.0', 'bsd-2-clause', 'bsd-3-clause', 'cc0-1.0', 'epl-1.0', 'gpl-2.0', 'gpl-3.0', 'isc',
        'lgpl-2.1', 'lgpl-3.0', 'mit', 'mpl-2.0', 'unlicense',
      ]);
      const popular = await s.api('GET', `${path}?popular=1`, null);
      expect(popular.body.map((l: { key: string }) => l.key)).toEqual(['apache-2.0', 'gpl-3.0', 'mit']);
      expect((await s.api('GET', `${path}?popular=0`, null)).body).toHaveLength(15);
    }
    expect((await s.api('GET', '/templates/licenses?popular=maybe', null)).status).toBe(400);
  });

  it('shows the MIT license as 8.13\'s RepoLicense, the year and the caller\'s name filled in', async () => {
    const r = await s.api('GET', '/templates/licenses/mit', user);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      key: 'mit', name: 'MIT License', nickname: null, popular: true, html_url: 'http://choosealicense.com/licenses/mit/',
      conditions: ['include-copyright'], permissions: ['commercial-use', 'modifications', 'distribution', 'private-use'], limitations: ['no-liability'],
    });
    expect(r.body.source_url).toMatch(/opensource\.org\/licenses?\/mit/i);
    expect(r.body.content).toContain('Permission is hereby granted, free of charge');
    expect(r.body.content).toContain(`Copyright (c) ${year} Tess Template`);
    expect(r.body.content).not.toMatch(/<year>|<copyright holders>/);
    // anonymous: no name to fill in, the holder placeholder stays; the year is filled
    const anon = await s.api('GET', '/licenses/MIT', null);
    expect(anon.status).toBe(200);
    expect(anon.body.content).toContain(`${year}`);
    expect(anon.body.content).not.toContain('Tess Template');
  });

  it('fills `project` and `fullname` as 8.13 (the GPL\'s program line and author)', async () => {
    const r = await s.api('GET', '/templates/licenses/gpl-3.0?project=My+Awesome+Project&fullname=Anton+GPL', user);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ key: 'gpl-3.0', nickname: 'GNU GPLv3', popular: true });
    expect(r.body.content).toContain('GNU GENERAL PUBLIC LICENSE');
    expect(r.body.content).toContain('My Awesome Project');
    expect(r.body.content).toContain(`${year}  Anton GPL`);
    expect(r.body.content).not.toContain('Tess Template');
    const apache = await s.api('GET', '/templates/licenses/apache-2.0?fullname=ACME', null);
    expect(apache.body.content).toContain(`Copyright ${year} ACME`);
  });

  it('is 404 `License Not Found` for an unknown key', async () => {
    const r = await s.api('GET', '/templates/licenses/wtfpl', null);
    expect(r.status).toBe(404);
    expect(r.body).toEqual({ message: '404 License Not Found' });
  });
});
