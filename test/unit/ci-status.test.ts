import { describe, expect, it } from 'vitest';
import type { CiWhen } from '../../daemon/ci/config-types.js';
import {
  buildsToReprocess,
  canCancel,
  canErase,
  canPlay,
  canRetry,
  compositeStatus,
  hasWarnings,
  isFinished,
  latestBuilds,
  nextPipelineStatus,
  nextStageActions,
  pipelineCancelTargets,
  pipelineRetryTargets,
  pipelineStatus,
  transition,
  type BuildStatus,
  type StatusBuild,
} from '../../daemon/ci/status.js';

const b = (status: BuildStatus, allowFailure = false, when: CiWhen = 'on_success'): StatusBuild => ({ status, allowFailure, when });

describe('compositeStatus / pipelineStatus', () => {
  const cases: [string, StatusBuild[], BuildStatus][] = [
    ['all success', [b('success'), b('success')], 'success'],
    ['all created', [b('created'), b('created')], 'created'],
    ['success and skipped', [b('success'), b('skipped')], 'skipped'],
    ['all skipped', [b('skipped'), b('skipped')], 'skipped'],
    ['success, skipped and canceled', [b('success'), b('skipped'), b('canceled')], 'canceled'],
    ['created, pending, skipped', [b('created'), b('pending'), b('skipped')], 'pending'],
    ['all pending', [b('pending')], 'pending'],
    ['running', [b('success'), b('running')], 'running'],
    ['success and created', [b('success'), b('created')], 'running'],
    ['failed and created', [b('failed'), b('created')], 'running'],
    ['failed', [b('success'), b('failed')], 'failed'],
    ['failed and skipped', [b('failed'), b('skipped')], 'failed'],
    ['failed and canceled', [b('failed'), b('canceled')], 'failed'],
    ['allowed failure ignored', [b('success'), b('failed', true)], 'success'],
    ['allowed cancel ignored', [b('success'), b('canceled', true)], 'success'],
    ['only allowed failures', [b('failed', true)], 'success'],
    ['manual skipped ignored', [b('success'), b('skipped', false, 'manual')], 'success'],
    ['only manual jobs', [b('skipped', false, 'manual')], 'success'],
    ['on_failure skipped ignored', [b('success'), b('skipped', false, 'on_failure')], 'success'],
    ['on_success skipped counts', [b('failed'), b('skipped', false, 'on_success')], 'failed'],
    ['manual pending counts', [b('success'), b('pending', false, 'manual')], 'running'],
  ];
  it.each(cases)('%s', (_label, builds, expected) => {
    expect(compositeStatus(builds)).toBe(expected);
    expect(pipelineStatus(builds)).toBe(expected);
  });

  it('a pipeline without builds is skipped, one with YAML errors failed', () => {
    expect(pipelineStatus([])).toBe('skipped');
    expect(pipelineStatus([], { yamlErrors: true })).toBe('failed');
    expect(compositeStatus([])).toBe('success');
  });

  it('has warnings when an allowed failure failed', () => {
    expect(hasWarnings([b('success'), b('failed', true)])).toBe(true);
    expect(hasWarnings([b('success'), b('failed')])).toBe(false);
  });

  it('maps computed statuses onto the pipeline like 8.x pipeline events', () => {
    expect(nextPipelineStatus('pending', 'created')).toBe('pending');
    expect(nextPipelineStatus('created', 'pending')).toBe('pending');
    expect(nextPipelineStatus('failed', 'pending')).toBe('pending'); // retry of a finished pipeline reads pending at once
    expect(nextPipelineStatus('canceled', 'pending')).toBe('pending');
    expect(nextPipelineStatus('skipped', 'pending')).toBe('pending');
    expect(nextPipelineStatus('running', 'pending')).toBe('running');
    expect(nextPipelineStatus('pending', 'running')).toBe('running');
    expect(nextPipelineStatus('running', 'success')).toBe('success');
    expect(nextPipelineStatus('running', 'canceled')).toBe('canceled');
  });
});

describe('build transitions and actions', () => {
  it('follows the commit status state machine', () => {
    expect(transition('created', 'enqueue')).toBe('pending');
    expect(transition('skipped', 'enqueue')).toBe('pending');
    expect(transition('running', 'enqueue')).toBeNull();
    expect(transition('skipped', 'process')).toBe('created');
    expect(transition('pending', 'run')).toBe('running');
    expect(transition('created', 'run')).toBeNull();
    expect(transition('pending', 'skip')).toBe('skipped');
    expect(transition('running', 'drop')).toBe('failed');
    expect(transition('success', 'drop')).toBeNull();
    expect(transition('running', 'success')).toBe('success');
    expect(transition('failed', 'cancel')).toBeNull();
  });

  it('finished means success, failed or canceled', () => {
    expect(['success', 'failed', 'canceled'].every((s) => isFinished(s as BuildStatus))).toBe(true);
    expect(['created', 'pending', 'running', 'skipped'].some((s) => isFinished(s as BuildStatus))).toBe(false);
  });

  it('cancel from created, pending or running', () => {
    for (const s of ['created', 'pending', 'running'] as BuildStatus[]) expect(canCancel({ status: s })).toBe(true);
    for (const s of ['success', 'failed', 'canceled', 'skipped'] as BuildStatus[]) expect(canCancel({ status: s })).toBe(false);
  });

  it('retry needs a finished build with commands', () => {
    for (const s of ['success', 'failed', 'canceled'] as BuildStatus[]) expect(canRetry({ status: s, commands: 'make' })).toBe(true);
    expect(canRetry({ status: 'failed', commands: '' })).toBe(false);
    expect(canRetry({ status: 'failed', commands: null })).toBe(false);
    for (const s of ['created', 'pending', 'running', 'skipped'] as BuildStatus[]) expect(canRetry({ status: s, commands: 'make' })).toBe(false);
  });

  it('play needs a manual build in skipped', () => {
    expect(canPlay({ status: 'skipped', when: 'manual', commands: 'deploy' })).toBe(true);
    expect(canPlay({ status: 'skipped', when: 'on_success', commands: 'deploy' })).toBe(false);
    expect(canPlay({ status: 'success', when: 'manual', commands: 'deploy' })).toBe(false);
    expect(canPlay({ status: 'skipped', when: 'manual', commands: '' })).toBe(false);
  });

  it('erase needs a finished build with artifacts or a trace', () => {
    expect(canErase({ status: 'failed', hasTrace: true })).toBe(true);
    expect(canErase({ status: 'success', hasArtifacts: true })).toBe(true);
    expect(canErase({ status: 'success' })).toBe(false);
    expect(canErase({ status: 'running', hasTrace: true })).toBe(false);
  });

  it('pipeline retry takes latest failed and canceled builds (8.x failed_or_canceled); cancel takes pending and running', () => {
    const builds = [
      { id: 1, status: 'failed' as BuildStatus, commands: 'x' },
      { id: 2, status: 'canceled' as BuildStatus, commands: 'x' },
      { id: 3, status: 'success' as BuildStatus, commands: 'x' },
      { id: 4, status: 'pending' as BuildStatus, commands: 'x' },
      { id: 5, status: 'running' as BuildStatus, commands: 'x' },
      { id: 6, status: 'created' as BuildStatus, commands: 'x' },
    ];
    expect(pipelineRetryTargets(builds).map((x) => x.id)).toEqual([1, 2]);
    expect(pipelineCancelTargets(builds).map((x) => x.id)).toEqual([4, 5]);
  });

  it('after a retry, later skipped builds are reprocessed', () => {
    const builds = [
      { id: 1, stageIdx: 0, status: 'skipped' as BuildStatus },
      { id: 2, stageIdx: 1, status: 'skipped' as BuildStatus },
      { id: 3, stageIdx: 2, status: 'skipped' as BuildStatus },
      { id: 4, stageIdx: 2, status: 'success' as BuildStatus },
    ];
    expect(buildsToReprocess(builds, 0).map((x) => x.id)).toEqual([2, 3]);
  });

  it('keeps the latest build per name', () => {
    const builds = [
      { id: 1, name: 'rspec' },
      { id: 2, name: 'lint' },
      { id: 3, name: 'rspec' },
    ];
    expect(latestBuilds(builds).map((x) => x.id)).toEqual([2, 3]);
  });
});

interface SimBuild {
  id: number;
  name: string;
  stageIdx: number;
  when: CiWhen;
  allowFailure: boolean;
  status: BuildStatus;
}

/** Runs a pipeline to the end: every build that gets pending finishes with `results[name]` (default success). */
function simulate(jobs: [string, number, CiWhen?, boolean?][], results: Record<string, BuildStatus> = {}) {
  const builds: SimBuild[] = jobs.map(([name, stageIdx, when = 'on_success', allowFailure = false], i) => ({
    id: i + 1, name, stageIdx, when, allowFailure, status: 'created',
  }));
  const ran: string[] = [];
  for (let guard = 0; guard < 50; guard++) {
    const { enqueue, skip } = nextStageActions(builds);
    for (const x of skip) x.status = 'skipped';
    for (const x of enqueue) x.status = 'pending';
    const pending = builds.filter((x) => x.status === 'pending');
    if (pending.length === 0) break;
    for (const x of pending) {
      x.status = results[x.name] ?? 'success';
      ran.push(x.name);
    }
  }
  const status = Object.fromEntries(builds.map((x) => [x.name, x.status]));
  return { ran, status, pipeline: pipelineStatus(builds) };
}

describe('nextStageActions (stage-by-stage processing)', () => {
  it('enqueues only the first stage, then waits', () => {
    const builds: SimBuild[] = [
      { id: 1, name: 'build', stageIdx: 0, when: 'on_success', allowFailure: false, status: 'created' },
      { id: 2, name: 'test', stageIdx: 1, when: 'on_success', allowFailure: false, status: 'created' },
    ];
    const first = nextStageActions(builds);
    expect(first.enqueue.map((x) => x.name)).toEqual(['build']);
    expect(first.skip).toEqual([]);
    builds[0].status = 'running';
    expect(nextStageActions(builds)).toEqual({ enqueue: [], skip: [] });
    builds[0].status = 'success';
    expect(nextStageActions(builds).enqueue.map((x) => x.name)).toEqual(['test']);
  });

  it('runs all stages when everything succeeds', () => {
    const r = simulate([['build', 0], ['test', 1], ['deploy', 2]]);
    expect(r.ran).toEqual(['build', 'test', 'deploy']);
    expect(r.pipeline).toBe('success');
  });

  it('build → test fails → on_failure job runs → always cleanup runs → pipeline failed', () => {
    const r = simulate(
      [['build', 0], ['test', 1], ['deploy', 2], ['notify_failure', 2, 'on_failure'], ['cleanup', 3, 'always']],
      { test: 'failed' },
    );
    expect(r.ran).toEqual(['build', 'test', 'notify_failure', 'cleanup']);
    expect(r.status.deploy).toBe('skipped');
    expect(r.pipeline).toBe('failed');
  });

  it('skips on_failure jobs when nothing failed, without blocking later stages', () => {
    const r = simulate([['build', 0], ['rollback', 1, 'on_failure'], ['deploy', 2]]);
    expect(r.ran).toEqual(['build', 'deploy']);
    expect(r.status.rollback).toBe('skipped');
    expect(r.pipeline).toBe('success');
  });

  it('leaves manual jobs skipped; they do not block later stages', () => {
    const r = simulate([['build', 0], ['deploy_manual', 1, 'manual'], ['after', 2]]);
    expect(r.ran).toEqual(['build', 'after']);
    expect(r.status.deploy_manual).toBe('skipped');
    expect(r.pipeline).toBe('success');
  });

  it('counts an allowed failure as success for later stages', () => {
    const r = simulate([['build', 0], ['flaky', 1, 'on_success', true], ['deploy', 2]], { flaky: 'failed' });
    expect(r.ran).toEqual(['build', 'flaky', 'deploy']);
    expect(r.pipeline).toBe('success');
  });

  it('a cancel in stage 2 skips later builds and the pipeline ends canceled', () => {
    const r = simulate([['build', 0], ['test', 1], ['deploy', 2], ['cleanup', 3, 'always']], { test: 'canceled' });
    expect(r.ran).toEqual(['build', 'test']);
    expect(r.status.deploy).toBe('skipped');
    expect(r.status.cleanup).toBe('skipped');
    expect(r.pipeline).toBe('canceled');
  });

  it('pipeline cancel: created builds become skipped on the next pass', () => {
    const builds: SimBuild[] = [
      { id: 1, name: 'build', stageIdx: 0, when: 'on_success', allowFailure: false, status: 'canceled' },
      { id: 2, name: 'test', stageIdx: 1, when: 'on_success', allowFailure: false, status: 'created' },
    ];
    const { enqueue, skip } = nextStageActions(builds);
    expect(enqueue).toEqual([]);
    expect(skip.map((x) => x.name)).toEqual(['test']);
  });

  it('always runs after success or failure', () => {
    expect(simulate([['a', 0], ['c', 1, 'always']]).ran).toEqual(['a', 'c']);
    expect(simulate([['a', 0], ['c', 1, 'always']], { a: 'failed' }).ran).toEqual(['a', 'c']);
  });

  it('applies decisions of earlier stages within one pass', () => {
    const builds: SimBuild[] = [
      { id: 1, name: 'm', stageIdx: 0, when: 'manual', allowFailure: false, status: 'created' },
      { id: 2, name: 't', stageIdx: 1, when: 'on_success', allowFailure: false, status: 'created' },
    ];
    const { enqueue, skip } = nextStageActions(builds);
    expect(skip.map((x) => x.name)).toEqual(['m']);
    expect(enqueue.map((x) => x.name)).toEqual(['t']);
  });
});
