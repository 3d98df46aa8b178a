import { describe, expect, it } from 'vitest';
import { parseCiConfig, type CiConfig, type CiJob } from '../../daemon/ci/config.js';

function ok(yaml: string): CiConfig {
  const r = parseCiConfig(yaml);
  if (!r.ok) throw new Error(`expected a valid config, got: ${r.error}`);
  return r.config;
}

function job(yaml: string, name: string): CiJob {
  const j = ok(yaml).jobs.find((x) => x.name === name);
  if (!j) throw new Error(`no job ${name}`);
  return j;
}

function err(yaml: string): string {
  const r = parseCiConfig(yaml);
  if (r.ok) throw new Error('expected an error');
  return r.error;
}

describe('parseCiConfig: valid configs', () => {
  it('expands a minimal job with 8.13 defaults', () => {
    const config = ok('rspec:\n  script: rspec\n');
    expect(config.stages).toEqual(['build', 'test', 'deploy']);
    expect(config.jobs).toEqual([
      {
        name: 'rspec',
        stage: 'test',
        stageIdx: 1,
        commands: 'rspec',
        script: ['rspec'],
        variables: [],
        tags: [],
        allowFailure: false,
        when: 'on_success',
        options: {},
      },
    ]);
  });

  it('joins global before_script and script into commands; a job before_script replaces it', () => {
    const config = ok(`
before_script: [pwd, bundle install]
after_script: [cleanup]
rspec:
  script: [rspec, rubocop]
local:
  before_script: [local]
  after_script: [local after]
  script: run
`);
    const [rspec, local] = config.jobs;
    expect(rspec.commands).toBe('pwd\nbundle install\nrspec\nrubocop');
    expect(rspec.beforeScript).toEqual(['pwd', 'bundle install']);
    expect(rspec.afterScript).toEqual(['cleanup']);
    expect(rspec.options.after_script).toEqual(['cleanup']);
    expect(local.commands).toBe('local\nrun');
    expect(local.afterScript).toEqual(['local after']);
    expect(local.options.after_script).toEqual(['local after']);
  });

  it('uses stages in order, and types when stages is absent', () => {
    const config = ok(`
stages: [lint, build, test, deploy]
lint: {stage: lint, script: x}
deploy: {stage: deploy, script: x}
unit: {script: x}
pack: {type: build, script: x}
`);
    expect(config.stages).toEqual(['lint', 'build', 'test', 'deploy']);
    expect(config.jobs.map((j) => [j.name, j.stage, j.stageIdx])).toEqual([
      ['lint', 'lint', 0],
      ['deploy', 'deploy', 3],
      ['unit', 'test', 2],
      ['pack', 'build', 1],
    ]);
    expect(ok('types: [a, b]\nj: {type: b, script: x}').jobs[0]).toMatchObject({ stage: 'b', stageIdx: 1 });
    expect(ok('stages: [a]\ntypes: [b]\nj: {stage: a, script: x}').stages).toEqual(['a']);
    // stage wins over type
    expect(job('j: {stage: build, type: deploy, script: x}', 'j').stage).toBe('build');
  });

  it('inherits image, services and cache unless the job sets them', () => {
    const config = ok(`
image: ruby:2.1
services: [mysql]
cache: {key: global, untracked: true, paths: [vendor/]}
a: {script: x}
b:
  script: x
  image: ruby:2.5
  services: [postgresql]
  cache: {paths: [tmp/], untracked: false, key: local}
`);
    const [a, b] = config.jobs;
    expect(a.options).toEqual({ image: 'ruby:2.1', services: ['mysql'], cache: { key: 'global', untracked: true, paths: ['vendor/'] } });
    expect(a.image).toBe('ruby:2.1');
    expect(b.options).toEqual({ image: 'ruby:2.5', services: ['postgresql'], cache: { paths: ['tmp/'], untracked: false, key: 'local' } });
    expect(b.cache).toEqual({ paths: ['tmp/'], untracked: false, key: 'local' });
  });

  it('merges global and job variables, job winning per key, keeping order', () => {
    const j = job(
      `
variables: {VAR1: global1, VAR3: global3}
rspec:
  script: rspec
  variables: {VAR1: value1, VAR2: value2}
`,
      'rspec',
    );
    expect(j.variables).toEqual([
      { key: 'VAR1', value: 'value1', public: true },
      { key: 'VAR3', value: 'global3', public: true },
      { key: 'VAR2', value: 'value2', public: true },
    ]);
    expect(job('variables: {A: a}\nj: {script: x}', 'j').variables).toEqual([{ key: 'A', value: 'a', public: true }]);
    // an empty job variables key is allowed (GitLab issue 18775)
    expect(job('j:\n  script: x\n  variables:\n', 'j').variables).toEqual([]);
  });

  it('reads only, except, tags, allow_failure, when and dependencies', () => {
    const config = ok(`
build: {stage: build, script: make}
other: {stage: build, script: make}
test:
  script: test
  only: [master, /^release-.*$/, tags, branches@group/project]
  except: [triggers]
  tags: [docker, linux]
  allow_failure: true
  when: on_failure
  dependencies: [build]
none: {stage: deploy, script: x, dependencies: [], when: manual}
`);
    const t = config.jobs[2];
    expect(t.only).toEqual(['master', '/^release-.*$/', 'tags', 'branches@group/project']);
    expect(t.except).toEqual(['triggers']);
    expect(t.tags).toEqual(['docker', 'linux']);
    expect(t.allowFailure).toBe(true);
    expect(t.when).toBe('on_failure');
    expect(t.dependencies).toEqual(['build']);
    expect(t.options.dependencies).toEqual(['build']);
    const none = config.jobs[3];
    expect(none.dependencies).toEqual([]);
    expect(none.when).toBe('manual');
    expect(config.jobs[0].dependencies).toBeUndefined();
    for (const w of ['on_success', 'always']) expect(job(`j: {script: x, when: ${w}}`, 'j').when).toBe(w);
  });

  it('reads artifacts as written', () => {
    const j = job(
      `
rspec:
  script: rspec
  artifacts:
    name: custom_name
    untracked: true
    paths: [logs/, binaries/]
    when: always
    expire_in: 3 hrs 4 min
`,
      'rspec',
    );
    const artifacts = { name: 'custom_name', untracked: true, paths: ['logs/', 'binaries/'], when: 'always', expire_in: '3 hrs 4 min' };
    expect(j.artifacts).toEqual(artifacts);
    expect(j.options.artifacts).toEqual(artifacts);
    for (const w of ['on_success', 'on_failure']) {
      expect(job(`j: {script: x, artifacts: {paths: [a], when: ${w}}}`, 'j').artifacts?.when).toBe(w);
    }
    expect(job('j: {script: x, artifacts: {expire_in: 7d}}', 'j').artifacts?.expire_in).toBe('7d');
    expect(job('j: {script: x, artifacts: {expire_in: never}}', 'j').artifacts?.expire_in).toBe('never');
  });

  it('reads environment as a name or a hash, with on_stop', () => {
    const config = ok(`
review:
  stage: deploy
  script: deploy
  environment:
    name: review/$CI_BUILD_REF_NAME
    url: https://$CI_BUILD_REF_NAME.example.com
    on_stop: stop_review
stop_review:
  stage: deploy
  script: stop
  when: manual
  environment: {name: review/$CI_BUILD_REF_NAME, action: stop}
production: {stage: deploy, script: x, environment: production}
`);
    expect(config.jobs[0].environment).toEqual({
      name: 'review/$CI_BUILD_REF_NAME',
      url: 'https://$CI_BUILD_REF_NAME.example.com',
      on_stop: 'stop_review',
    });
    expect(config.jobs[1].options.environment).toEqual({ name: 'review/$CI_BUILD_REF_NAME', action: 'stop' });
    expect(config.jobs[2].environment).toEqual({ name: 'production', action: 'start' });
  });

  it('accepts a coverage regex on a job', () => {
    expect(job("j:\n  script: x\n  coverage: '/Code coverage: \\d+\\.\\d+/'\n", 'j').coverageRegex).toBe('/Code coverage: \\d+\\.\\d+/');
    expect(job("j: {script: x, coverage: '/\\(\\d+.\\d+\\%\\) covered/'}", 'j').coverageRegex).toBe('/\\(\\d+.\\d+\\%\\) covered/');
  });

  it('ignores hidden jobs and supports anchors, aliases and merge keys', () => {
    const config = ok(`
.template: &tmpl
  stage: build
  script: execute-script-for-job
.hidden_without_script: {image: ruby}
job1: *tmpl
job2:
  <<: *tmpl
  when: manual
`);
    expect(config.jobs.map((j) => [j.name, j.stage, j.commands, j.when])).toEqual([
      ['job1', 'build', 'execute-script-for-job', 'on_success'],
      ['job2', 'build', 'execute-script-for-job', 'manual'],
    ]);
  });

  it('reads YAML 1.1 booleans as Psych did (yes/on/true), but y stays a string', () => {
    const j = job('j:\n  script: x\n  allow_failure: yes\n  artifacts: {untracked: on}\n  only: [y]\n', 'j');
    expect(j.allowFailure).toBe(true);
    expect(j.artifacts?.untracked).toBe(true);
    expect(j.only).toEqual(['y']);
    expect(job('j: {script: x, allow_failure: off}', 'j').allowFailure).toBe(false);
  });

  it('lets the last of duplicate keys win, as Psych did', () => {
    expect(job('j: {script: a}\nj: {script: b}', 'j').commands).toBe('b');
  });
});

describe('parseCiConfig: errors', () => {
  const cases: [string, string, string][] = [
    ['not a mapping', 'invalid_yaml', 'Invalid configuration format'],
    ['empty file', '', 'Invalid configuration format'],
    ['no jobs', 'before_script: [bundle]', 'jobs config should contain at least one visible job'],
    ['only hidden jobs', '.hidden: {script: ls}', 'jobs config should contain at least one visible job'],
    ['job not a hash', 'extra: bundle update', 'jobs:extra config should be a hash'],
    ['job without value', 'rspec:\nother: {script: x}', "jobs:rspec config can't be blank"],
    ['hidden job not a hash', '.t: x\nj: {script: x}', 'jobs:.t config should be a hash'],
    ['hidden job empty', '.t:\nj: {script: x}', "jobs:.t config can't be blank"],
    ['unknown job key', 'rspec: {script: x, foo: 1, bar: 2}', 'jobs:rspec config contains unknown keys: foo, bar'],
    ['blank job name', '"": {script: x}', "jobs:job name can't be blank"],
    ['numeric job name', '10: {script: x}', 'jobs:10 name should be a symbol'],
    ['missing script', 'rspec: {stage: test}', "jobs:rspec script can't be blank"],
    ['script wrong type', 'rspec: {script: 1}', 'jobs:rspec:script config should be a string or an array of strings'],
    ['script array of non-strings', 'rspec: {script: [1, 2]}', 'jobs:rspec:script config should be a string or an array of strings'],
    ['global before_script', 'before_script: bundle update\nrspec: {script: x}', 'before_script config should be an array of strings'],
    ['job before_script', 'rspec: {script: x, before_script: [10, test]}', 'jobs:rspec:before_script config should be an array of strings'],
    ['global after_script', 'after_script: x\nrspec: {script: x}', 'after_script config should be an array of strings'],
    ['job after_script', 'rspec: {script: x, after_script: [10]}', 'jobs:rspec:after_script config should be an array of strings'],
    ['global image', 'image: [test]\nrspec: {script: x}', 'image config should be a string'],
    ['job image', 'rspec: {script: x, image: [test]}', 'jobs:rspec:image config should be a string'],
    ['global services', 'services: test\nrspec: {script: x}', 'services config should be an array of strings'],
    ['job services', 'rspec: {script: x, services: [10, test]}', 'jobs:rspec:services config should be an array of strings'],
    ['stages not array', 'stages: test\nrspec: {script: x}', 'stages config should be an array of strings'],
    ['stages with non-string', 'stages: [true, test]\nrspec: {script: x}', 'stages config should be an array of strings'],
    ['types not array', 'types: test\nrspec: {script: x}', 'types config should be an array of strings'],
    ['variables not a map', 'variables: test\nrspec: {script: x}', 'variables config should be a hash of key value pairs'],
    ['variables non-string value', 'variables: {test: false}\nrspec: {script: x}', 'variables config should be a hash of key value pairs'],
    ['variables integer value', 'variables: {DEPTH: 3}\nrspec: {script: x}', 'variables config should be a hash of key value pairs'],
    ['job variables as list', 'rspec: {script: x, variables: [VAR1, value1]}', 'jobs:rspec:variables config should be a hash of key value pairs'],
    ['job variables false', 'rspec: {script: x, variables: false}', 'jobs:rspec:variables config should be a hash of key value pairs'],
    ['tags string', 'rspec: {script: x, tags: mysql}', 'jobs:rspec tags should be an array of strings'],
    ['allow_failure string', 'rspec: {script: x, allow_failure: string}', 'jobs:rspec allow failure should be a boolean value'],
    ['when unknown', 'rspec: {script: x, when: 1}', 'jobs:rspec when should be on_success, on_failure, always or manual'],
    ['dependencies string', 'rspec: {script: x, dependencies: string}', 'jobs:rspec dependencies should be an array of strings'],
    ['type not string', 'rspec: {script: x, type: 1}', 'jobs:rspec:type config should be a string'],
    ['stage not string', 'rspec: {script: x, stage: [a]}', 'jobs:rspec:stage config should be a string'],
    ['stage unknown (default stages)', 'rspec: {script: x, type: acceptance}', 'rspec job: stage parameter should be build, test, deploy'],
    ['stage unknown (types)', 'types: [build, test]\nrspec: {script: x, type: acceptance}', 'rspec job: stage parameter should be build, test'],
    ['default stage missing', 'stages: [build, deploy]\nrspec: {script: x}', 'rspec job: stage parameter should be build, deploy'],
    ['only integer', 'rspec: {script: x, only: 1}', 'jobs:rspec:only config should be an array of strings or regexps'],
    ['only array of integers', 'rspec: {script: x, only: [1, 1]}', 'jobs:rspec:only config should be an array of strings or regexps'],
    ['only invalid regexp', 'rspec: {script: x, only: ["/*invalid/"]}', 'jobs:rspec:only config should be an array of strings or regexps'],
    ['except invalid regexp', 'rspec: {script: x, except: ["/(/"]}', 'jobs:rspec:except config should be an array of strings or regexps'],
    ['artifacts not hash', 'rspec: {script: x, artifacts: [a]}', 'jobs:rspec:artifacts config should be a hash'],
    ['artifacts unknown key', 'rspec: {script: x, artifacts: {paths: [a], x: 1}}', 'jobs:rspec:artifacts config contains unknown keys: x'],
    ['artifacts name', 'rspec: {script: x, artifacts: {name: 1}}', 'jobs:rspec:artifacts name should be a string'],
    ['artifacts when', 'rspec: {script: x, artifacts: {when: 1}}', 'jobs:rspec:artifacts when should be on_success, on_failure or always'],
    ['artifacts expire_in integer', 'rspec: {script: x, artifacts: {expire_in: 1}}', 'jobs:rspec:artifacts expire in should be a duration'],
    ['artifacts expire_in bad', 'rspec: {script: x, artifacts: {expire_in: 7 elephants}}', 'jobs:rspec:artifacts expire in should be a duration'],
    ['artifacts untracked', 'rspec: {script: x, artifacts: {untracked: string}}', 'jobs:rspec:artifacts untracked should be a boolean value'],
    ['artifacts paths', 'rspec: {script: x, artifacts: {paths: string}}', 'jobs:rspec:artifacts paths should be an array of strings'],
    ['cache unknown key', 'cache: {untracked: true, invalid: key}\nrspec: {script: x}', 'cache config contains unknown keys: invalid'],
    ['cache not hash', 'cache: [a]\nrspec: {script: x}', 'cache config should be a hash'],
    ['cache untracked', 'cache: {untracked: string}\nrspec: {script: x}', 'cache:untracked config should be a boolean value'],
    ['cache paths', 'cache: {paths: string}\nrspec: {script: x}', 'cache:paths config should be an array of strings'],
    ['cache key', 'cache: {key: 1}\nrspec: {script: x}', 'cache:key config should be a string or symbol'],
    ['job cache key', 'rspec: {script: x, cache: {key: 1}}', 'jobs:rspec:cache:key config should be a string or symbol'],
    ['job cache untracked', 'rspec: {script: x, cache: {untracked: x}}', 'jobs:rspec:cache:untracked config should be a boolean value'],
    ['job cache paths', 'rspec: {script: x, cache: {paths: x}}', 'jobs:rspec:cache:paths config should be an array of strings'],
    ['environment type', 'deploy: {script: x, environment: 1}', 'jobs:deploy:environment config should be a hash or a string'],
    ['environment invalid name', 'deploy: {script: x, environment: "production|staging"}', "jobs:deploy:environment name can contain only letters, digits, '-', '_', '/', '$', '{', '}', '.' and spaces"],
    ['environment blank name', 'deploy: {script: x, environment: {url: "http://x.org"}}', "jobs:deploy:environment name can't be blank"],
    ['environment unknown key', 'deploy: {script: x, environment: {name: p, x: 1}}', 'jobs:deploy:environment config contains unknown keys: x'],
    ['environment url', 'deploy: {script: x, environment: {name: p, url: not a url}}', 'jobs:deploy:environment url must be a valid url'],
    ['environment url long', `deploy: {script: x, environment: {name: p, url: "http://${'a'.repeat(260)}.org"}}`, 'jobs:deploy:environment url is too long (maximum is 255 characters)'],
    ['environment action', 'deploy: {script: x, environment: {name: p, action: destroy}}', 'jobs:deploy:environment action should be start or stop'],
    ['coverage not regexp', 'rspec: {script: x, coverage: "\\\\d+"}', 'jobs:rspec:coverage config must be a regular expression'],
    ['undefined dependency', 'build1: {stage: build, script: x}\ntest1: {script: x, dependencies: [undefined]}', 'test1 job: undefined dependency: undefined'],
    ['dependency on hidden job', '.b: {stage: build, script: x}\ntest1: {script: x, dependencies: [.b]}', 'test1 job: undefined dependency: .b'],
    ['dependency in same stage', 'deploy: {stage: test, script: x}\ntest1: {script: x, dependencies: [deploy]}', 'test1 job: dependency deploy is not defined in prior stages'],
    ['dependency in later stage', 'deploy: {stage: deploy, script: x}\ntest1: {script: x, dependencies: [deploy]}', 'test1 job: dependency deploy is not defined in prior stages'],
    ['on_stop missing', 'review: {script: x, environment: {name: r, on_stop: close}}', 'review job: on_stop job close is not defined'],
    ['on_stop without environment', 'review: {script: x, environment: {name: r, on_stop: close}}\nclose: {script: x}', 'review job: on_stop job close does not have environment defined'],
    ['on_stop other environment', 'review: {script: x, environment: {name: r, on_stop: close}}\nclose: {script: x, environment: {name: s, action: stop}}', 'review job: on_stop job close have different environment name'],
    ['on_stop not stop', 'review: {script: x, environment: {name: r, on_stop: close}}\nclose: {script: x, environment: r}', 'review job: on_stop job close needs to have action stop defined'],
  ];
  it.each(cases)('%s', (_label, yaml, message) => {
    expect(err(yaml)).toBe(message);
  });

  it('lower-cases structural messages, including job names', () => {
    expect(err('RSpec: {script: x, Foo: 1}')).toBe('jobs:rspec config contains unknown keys: foo');
  });

  it('reports global errors before job errors, and structural before logical', () => {
    expect(err('image: [x]\nrspec: {script: 1}')).toBe('image config should be a string');
    expect(err('a: {script: x, stage: nope}\nb: {script: 1}')).toBe('jobs:b:script config should be a string or an array of strings');
  });

  it('returns YAML syntax errors without throwing', () => {
    const e = err('invalid: yaml: test');
    expect(e).toMatch(/^\(<unknown>\): .*line 1/);
    expect(err('a: [1, 2')).toMatch(/^\(<unknown>\): /);
    expect(err('j: *undefined_anchor')).toMatch(/^\(<unknown>\): /);
  });

  it('rejects alias bombs and oversized files quickly', () => {
    const bomb = ['a: &a ["x","x","x","x","x","x","x","x","x","x"]'];
    for (let i = 1; i < 9; i++) {
      const prev = String.fromCharCode(96 + i);
      const cur = String.fromCharCode(97 + i);
      bomb.push(`${cur}: &${cur} [${Array(10).fill(`*${prev}`).join(',')}]`);
    }
    const started = Date.now();
    expect(err(bomb.join('\n'))).toMatch(/resource exhaustion/);
    expect(err(`j: {script: "${'x'.repeat(1024 * 1024)}"}`)).toMatch(/larger than 1 MB/);
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('never throws on odd input', () => {
    for (const text of ['---\n- a\n- b', '!!set {a, b}', 'j: !!binary aGVsbG8=', '? [a]\n: b', 'j: {script: 2016-10-22}', '~']) {
      expect(parseCiConfig(text).ok).toBe(false);
    }
  });
});
