// Build and pipeline state logic of GitLab 8.13 (has_status.rb, commit_status.rb, ci/build.rb,
// ci/pipeline.rb, process_pipeline_service.rb), free of storage: the pipeline service feeds it rows.
import type { CiWhen } from './config-types.js';

/** Build (and pipeline) statuses. There is no `manual` status in 8.x: manual builds wait in `skipped`. */
export type BuildStatus = 'created' | 'pending' | 'running' | 'success' | 'failed' | 'canceled' | 'skipped';

/** Every build status, in GitLab's order. */
export const BUILD_STATUSES: readonly BuildStatus[] = ['created', 'pending', 'running', 'success', 'failed', 'canceled', 'skipped'];

/** Statuses of a finished ("complete") build: success, failed, canceled. */
export const FINISHED_STATUSES: readonly BuildStatus[] = ['success', 'failed', 'canceled'];

/** Whether the value is a known build status. */
export function isBuildStatus(value: unknown): value is BuildStatus {
  return typeof value === 'string' && (BUILD_STATUSES as readonly string[]).includes(value);
}

/** Whether a build or pipeline in this status is finished (success, failed or canceled). */
export function isFinished(status: BuildStatus): boolean {
  return FINISHED_STATUSES.includes(status);
}

/** Whether a build or pipeline in this status is active (pending or running). */
export function isActive(status: BuildStatus): boolean {
  return status === 'pending' || status === 'running';
}

/** What the status derivation needs of a build (`when` defaults to on_success). */
export interface StatusBuild {
  status: BuildStatus;
  allowFailure: boolean;
  when?: CiWhen;
}

/**
 * Whether the build is left out of composite statuses: failed or canceled with allow_failure,
 * and skipped manual or on_failure builds.
 */
export function isIgnoredInStatus(build: StatusBuild): boolean {
  if (build.allowFailure && (build.status === 'failed' || build.status === 'canceled')) return true;
  return build.status === 'skipped' && (build.when === 'manual' || build.when === 'on_failure');
}

/**
 * Composite status of a set of (latest) builds, GitLab 8.13 rules in order: all success (also
 * when nothing is left) → success; all created → created; success+skipped → skipped;
 * success+skipped+canceled → canceled; created+pending+skipped → pending; anything still to run
 * → running; otherwise failed.
 */
export function compositeStatus(builds: readonly StatusBuild[]): BuildStatus {
  const counted = builds.filter((b) => !isIgnoredInStatus(b));
  const n = counted.length;
  const count: Record<BuildStatus, number> = { created: 0, pending: 0, running: 0, success: 0, failed: 0, canceled: 0, skipped: 0 };
  for (const b of counted) count[b.status]++;
  if (n === count.success) return 'success';
  if (n === count.created) return 'created';
  if (n === count.success + count.skipped) return 'skipped';
  if (n === count.success + count.skipped + count.canceled) return 'canceled';
  if (n === count.created + count.skipped + count.pending) return 'pending';
  if (count.running + count.pending + count.created > 0) return 'running';
  return 'failed';
}

/**
 * Status of a pipeline from its latest builds: `skipped` with no builds, `failed` when its YAML
 * was invalid, else the composite status.
 */
export function pipelineStatus(builds: readonly StatusBuild[], opts: { yamlErrors?: boolean } = {}): BuildStatus {
  if (opts.yamlErrors) return 'failed';
  if (builds.length === 0) return 'skipped';
  return compositeStatus(builds);
}

/**
 * The pipeline status after an update to `computed` (8.x pipeline events): `created` changes
 * nothing; `pending` enqueues (created → pending, a finished or skipped pipeline → running,
 * pending/running stay); any other status is taken as is.
 */
export function nextPipelineStatus(current: BuildStatus, computed: BuildStatus): BuildStatus {
  if (computed === 'created') return current;
  if (computed === 'pending') {
    // A retried or played finished pipeline reads pending at once (then running when a runner takes a build).
    if (current === 'created' || isFinished(current) || current === 'skipped') return 'pending';
    return current;
  }
  return computed;
}

/** Whether the pipeline has warnings: some latest build failed with allow_failure. */
export function hasWarnings(builds: readonly StatusBuild[]): boolean {
  return builds.some((b) => b.allowFailure && b.status === 'failed');
}

/** Build state-machine events (commit_status.rb). */
export type BuildEvent = 'enqueue' | 'process' | 'run' | 'skip' | 'drop' | 'success' | 'cancel';

const TRANSITIONS: Record<BuildEvent, { from: readonly BuildStatus[]; to: BuildStatus }> = {
  enqueue: { from: ['created', 'skipped'], to: 'pending' },
  process: { from: ['skipped'], to: 'created' },
  run: { from: ['pending'], to: 'running' },
  skip: { from: ['created', 'pending'], to: 'skipped' },
  drop: { from: ['created', 'pending', 'running'], to: 'failed' },
  success: { from: ['created', 'pending', 'running'], to: 'success' },
  cancel: { from: ['created', 'pending', 'running'], to: 'canceled' },
};

/** The status after `event`, or null when the event is not allowed from `status`. */
export function transition(status: BuildStatus, event: BuildEvent): BuildStatus | null {
  const t = TRANSITIONS[event];
  return t.from.includes(status) ? t.to : null;
}

/** A build as processing sees it. */
export interface ProcessableBuild extends StatusBuild {
  stageIdx: number;
  when: CiWhen;
}

/** Builds to move: created → pending (`enqueue`) and created → skipped (`skip`). */
export interface StageActions<B> {
  enqueue: B[];
  skip: B[];
}

function whenAllows(when: CiWhen, prior: BuildStatus): boolean {
  switch (when) {
    case 'on_success':
      return prior === 'success';
    case 'on_failure':
      return prior === 'failed';
    case 'always':
      return prior === 'success' || prior === 'failed';
    default:
      return false; // manual: skipped until played
  }
}

/**
 * One processing pass over a pipeline's latest builds (ProcessPipelineService): for each stage
 * with created builds, in order, the composite status of all earlier stages decides. If it is not
 * finished the stage waits; otherwise each created build is enqueued when its `when` allows
 * (on_success: success; on_failure: failed; always: success or failed; manual: never) and skipped
 * otherwise. Decisions count for later stages of the same pass. Call after every build change.
 */
export function nextStageActions<B extends ProcessableBuild>(builds: readonly B[]): StageActions<B> {
  const status = new Map<B, BuildStatus>(builds.map((b) => [b, b.status]));
  const current = (b: B): StatusBuild => ({ status: status.get(b) ?? b.status, allowFailure: b.allowFailure, when: b.when });
  const stages = [...new Set(builds.filter((b) => b.status === 'created').map((b) => b.stageIdx))].sort((a, b) => a - b);
  const actions: StageActions<B> = { enqueue: [], skip: [] };

  for (const idx of stages) {
    const earlier = builds.filter((b) => b.stageIdx < idx).map(current);
    const prior = earlier.length === 0 ? 'success' : compositeStatus(earlier);
    if (!isFinished(prior)) continue;
    for (const b of builds) {
      if (b.stageIdx !== idx || b.status !== 'created') continue;
      if (whenAllows(b.when, prior)) {
        actions.enqueue.push(b);
        status.set(b, 'pending');
      } else {
        actions.skip.push(b);
        status.set(b, 'skipped');
      }
    }
  }
  return actions;
}

/** A build as the manual actions (cancel, retry, play, erase) see it. */
export interface ActionableBuild {
  status: BuildStatus;
  when?: CiWhen;
  /** The build's runner commands; retry and play need them. */
  commands?: string | null;
  hasArtifacts?: boolean;
  hasTrace?: boolean;
}

/** Cancel is possible from created, pending or running (→ canceled). */
export function canCancel(build: ActionableBuild): boolean {
  return transition(build.status, 'cancel') !== null;
}

/** Retry (a new pending build copying this one) needs a finished build with commands. */
export function canRetry(build: ActionableBuild): boolean {
  return isFinished(build.status) && !!build.commands;
}

/** Play needs a manual build waiting in skipped, with commands; it moves to pending. */
export function canPlay(build: ActionableBuild): boolean {
  return build.when === 'manual' && build.status === 'skipped' && !!build.commands;
}

/** Erase needs a finished build that has artifacts or a trace. */
export function canErase(build: ActionableBuild): boolean {
  return isFinished(build.status) && (!!build.hasArtifacts || !!build.hasTrace);
}

/** After retrying a build of `stageIdx`: the later-stage skipped builds to move back to created. */
export function buildsToReprocess<B extends { status: BuildStatus; stageIdx: number }>(builds: readonly B[], stageIdx: number): B[] {
  return builds.filter((b) => b.status === 'skipped' && b.stageIdx > stageIdx);
}

/** Pipeline retry: the latest builds that failed and can be retried (canceled ones are not). */
export function pipelineRetryTargets<B extends ActionableBuild>(latest: readonly B[]): B[] {
  return latest.filter((b) => (b.status === 'failed' || b.status === 'canceled') && canRetry(b));
}

/** Pipeline cancel: only pending and running builds; created ones are skipped by the next pass. */
export function pipelineCancelTargets<B extends ActionableBuild>(builds: readonly B[]): B[] {
  return builds.filter((b) => isActive(b.status));
}

/** The latest build per name (highest id wins), which is what statuses are computed from. */
export function latestBuilds<B extends { id: number; name: string }>(builds: readonly B[]): B[] {
  const byName = new Map<string, B>();
  for (const b of builds) {
    const seen = byName.get(b.name);
    if (!seen || b.id > seen.id) byName.set(b.name, b);
  }
  return [...byName.values()].sort((a, b) => a.id - b.id);
}
