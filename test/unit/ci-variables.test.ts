import { describe, expect, it } from 'vitest';
import { buildVariables, predefinedVariables, type PredefinedVariablesInput } from '../../daemon/ci/variables.js';

const SHA = 'a'.repeat(40);

function input(extra: Partial<PredefinedVariablesInput> = {}, build: Partial<PredefinedVariablesInput['build']> = {}): PredefinedVariablesInput {
  return {
    build: { id: 7, token: 'buildtoken', sha: SHA, beforeSha: null, ref: 'master', tag: false, name: 'rspec', stage: 'test', ...build },
    server: { version: '8.13.0', revision: 'abc1234' },
    project: { id: 3, path: 'project', pathWithNamespace: 'group/project', namespacePath: 'group', webUrl: 'http://host/group/project' },
    pipeline: { id: 11 },
    ...extra,
  };
}

const keys = (vars: { key: string }[]) => vars.map((v) => v.key);

describe('predefinedVariables', () => {
  it('lists GitLab 8.13 variables in order with their public flags', () => {
    expect(predefinedVariables(input())).toEqual([
      { key: 'CI', value: 'true', public: true },
      { key: 'GITLAB_CI', value: 'true', public: true },
      { key: 'CI_BUILD_ID', value: '7', public: true },
      { key: 'CI_BUILD_TOKEN', value: 'buildtoken', public: false },
      { key: 'CI_BUILD_REF', value: SHA, public: true },
      { key: 'CI_BUILD_BEFORE_SHA', value: '0'.repeat(40), public: true },
      { key: 'CI_BUILD_REF_NAME', value: 'master', public: true },
      { key: 'CI_BUILD_NAME', value: 'rspec', public: true },
      { key: 'CI_BUILD_STAGE', value: 'test', public: true },
      { key: 'CI_SERVER_NAME', value: 'GitLab', public: true },
      { key: 'CI_SERVER_VERSION', value: '8.13.0', public: true },
      { key: 'CI_SERVER_REVISION', value: 'abc1234', public: true },
      { key: 'CI_PROJECT_ID', value: '3', public: true },
      { key: 'CI_PROJECT_NAME', value: 'project', public: true },
      { key: 'CI_PROJECT_PATH', value: 'group/project', public: true },
      { key: 'CI_PROJECT_NAMESPACE', value: 'group', public: true },
      { key: 'CI_PROJECT_URL', value: 'http://host/group/project', public: true },
      { key: 'CI_PIPELINE_ID', value: '11', public: true },
    ]);
  });

  it('adds tag, trigger and manual variables only when they apply', () => {
    const vars = predefinedVariables(input({}, { tag: true, ref: 'v1.0', triggered: true, when: 'manual', beforeSha: SHA }));
    expect(vars).toContainEqual({ key: 'CI_BUILD_TAG', value: 'v1.0', public: true });
    expect(vars).toContainEqual({ key: 'CI_BUILD_TRIGGERED', value: 'true', public: true });
    expect(vars).toContainEqual({ key: 'CI_BUILD_MANUAL', value: 'true', public: true });
    expect(vars).toContainEqual({ key: 'CI_BUILD_BEFORE_SHA', value: SHA, public: true });
    const plain = keys(predefinedVariables(input()));
    for (const k of ['CI_BUILD_TAG', 'CI_BUILD_TRIGGERED', 'CI_BUILD_MANUAL', 'CI_RUNNER_ID', 'CI_REGISTRY', 'GITLAB_USER_ID']) {
      expect(plain).not.toContain(k);
    }
  });

  it('adds runner, registry and user variables', () => {
    const vars = predefinedVariables(
      input({
        runner: { id: 4, description: 'docker runner', tags: ['docker', 'linux'] },
        registry: { hostPort: 'registry.example.com:5000', projectImage: 'registry.example.com:5000/group/project' },
        user: { id: 1, email: 'root@example.com' },
      }),
    );
    expect(keys(vars).slice(-8)).toEqual([
      'CI_PIPELINE_ID', 'CI_RUNNER_ID', 'CI_RUNNER_DESCRIPTION', 'CI_RUNNER_TAGS',
      'CI_REGISTRY', 'CI_REGISTRY_IMAGE', 'GITLAB_USER_ID', 'GITLAB_USER_EMAIL',
    ]);
    expect(vars).toContainEqual({ key: 'CI_RUNNER_TAGS', value: 'docker, linux', public: true });
    expect(vars).toContainEqual({ key: 'GITLAB_USER_EMAIL', value: 'root@example.com', public: true });
    const noImage = predefinedVariables(input({ registry: { hostPort: 'r:5000' } }));
    expect(keys(noImage)).toContain('CI_REGISTRY');
    expect(keys(noImage)).not.toContain('CI_REGISTRY_IMAGE');
  });
});

describe('buildVariables', () => {
  it('orders predefined → YAML → user → secret → trigger (last occurrence wins on the runner)', () => {
    const vars = buildVariables({
      ...input({ user: { id: 1, email: 'u@example.com' } }),
      yamlVariables: [{ key: 'DB', value: 'postgres', public: true }],
      secretVariables: [{ key: 'SECRET', value: 's3cr3t' }],
      triggerVariables: [{ key: 'DB', value: 'mysql' }],
    });
    expect(keys(vars).slice(-5)).toEqual(['DB', 'GITLAB_USER_ID', 'GITLAB_USER_EMAIL', 'SECRET', 'DB']);
    expect(vars.at(-2)).toEqual({ key: 'SECRET', value: 's3cr3t', public: false });
    expect(vars.at(-1)).toEqual({ key: 'DB', value: 'mysql', public: false });
    expect(vars[0]).toEqual({ key: 'CI', value: 'true', public: true });
  });
});
