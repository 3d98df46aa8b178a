/** CI data as the CLI shows it: pipeline and build shapes, stages, durations, status words, plain-text lines. */

/** The user fields the CLI shows. */
export interface CiUser {
  id: number;
  username: string;
  name?: string;
}

/** A pipeline as the API sends it (fields the CLI uses). */
export interface Pipeline {
  id: number;
  status: string;
  ref: string;
  sha: string;
  before_sha?: string;
  tag: boolean;
  yaml_errors: string | null;
  user: CiUser | null;
  created_at: string;
  updated_at?: string;
  started_at: string | null;
  finished_at: string | null;
  committed_at?: string | null;
  duration: number | null;
}

/** A build as the API sends it (fields the CLI uses). */
export interface Build {
  id: number;
  name: string;
  stage: string;
  status: string;
  ref: string;
  tag: boolean;
  coverage: number | null;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  user: CiUser | null;
  commit: { id: string; short_id: string; title: string; author_name: string } | null;
  runner: { id: number; description: string | null } | null;
  pipeline?: { id: number; sha: string; ref: string; status: string } | null;
  artifacts_file?: { filename: string; size: number } | null;
  download_url?: string | null;
}

/** Statuses after which nothing changes any more (a pipeline or build in one of them is done). */
export const FINAL_STATUSES: ReadonlySet<string> = new Set(['success', 'failed', 'canceled', 'skipped']);

/** Whether a status is final. */
export function isFinal(status: string): boolean {
  return FINAL_STATUSES.has(status);
}

/** Seconds as `45s`, `3m 07s`, `1h 02m`. */
export function formatSeconds(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h ${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}

/** How long something ran: started -> finished, or started -> now while it runs; '' when it has not started. */
export function elapsed(startedAt: string | null | undefined, finishedAt: string | null | undefined, now = Date.now()): string {
  if (!startedAt) return '';
  const start = Date.parse(startedAt);
  const end = finishedAt ? Date.parse(finishedAt) : now;
  if (Number.isNaN(start) || Number.isNaN(end)) return '';
  return formatSeconds((end - start) / 1000);
}

/** Bytes as `512 B`, `1.5 KiB`, `3.2 MiB`. */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes / 1024;
  let i = 0;
  while (value >= 1024 && i < units.length - 1) {
    value /= 1024;
    i++;
  }
  return `${value.toFixed(1)} ${units[i]}`;
}

/** A one-character mark per status (for terminals). */
export function statusIcon(status: string): string {
  const icons: Record<string, string> = {
    success: '✔', failed: '✖', canceled: '⊘', skipped: '»', running: '●', pending: '◷', created: '○', manual: '▶',
  };
  return icons[status] ?? '?';
}

/** The ink/ANSI colour name of a status. */
export function statusColor(status: string): string {
  const colors: Record<string, string> = {
    success: 'green', failed: 'red', canceled: 'gray', skipped: 'gray', running: 'blue', pending: 'yellow', created: 'gray',
  };
  return colors[status] ?? 'white';
}

/** The latest build of each name (the highest id wins: retries replace earlier attempts), in id order. */
export function latestBuilds<T extends { id: number; name: string }>(builds: readonly T[]): T[] {
  const byName = new Map<string, T>();
  for (const b of builds) {
    const seen = byName.get(b.name);
    if (!seen || b.id > seen.id) byName.set(b.name, b);
  }
  return [...byName.values()].sort((a, b) => a.id - b.id);
}

/** One stage and its builds. */
export interface StageView<T> {
  name: string;
  status: string;
  builds: T[];
}

/**
 * Group builds into stages in pipeline order (builds are created stage by stage, so the stage of the lowest
 * build id comes first; pass every build, retried ones included, as `orderFrom`), each with a composite status.
 */
export function stagesOf<T extends { id: number; stage: string; status: string }>(builds: readonly T[], orderFrom: readonly T[] = builds): StageView<T>[] {
  const order = new Map<string, number>();
  for (const b of [...orderFrom, ...builds].sort((a, b) => a.id - b.id)) if (!order.has(b.stage)) order.set(b.stage, order.size);
  const stages: StageView<T>[] = [...order.keys()].map((name) => ({ name, status: '', builds: [] }));
  for (const b of [...builds].sort((a, b) => a.id - b.id)) stages[order.get(b.stage)!].builds.push(b);
  for (const s of stages) s.status = stageStatus(s.builds.map((b) => b.status));
  return stages;
}

/** A simple composite status of a stage's builds (running beats pending beats failed...). */
export function stageStatus(statuses: string[]): string {
  if (statuses.length === 0) return 'created';
  const has = (s: string) => statuses.includes(s);
  if (statuses.every((s) => s === 'skipped')) return 'skipped';
  if (statuses.every((s) => s === 'created')) return 'created';
  if (has('running')) return 'running';
  if (has('pending')) return has('success') || has('failed') ? 'running' : 'pending';
  if (has('created')) return has('success') || has('failed') ? 'running' : 'created';
  if (has('failed')) return 'failed';
  if (has('canceled')) return 'canceled';
  return 'success';
}

/** The short sha (8 characters). */
export function shortSha(sha: string | null | undefined): string {
  return (sha ?? '').slice(0, 8);
}

/** A pipeline's header line: `pipeline #12 running  master @ 1a2b3c4d  (1m 05s)`. */
export function pipelineHeader(p: Pipeline, now = Date.now()): string {
  const time = p.duration !== null && isFinal(p.status) ? formatSeconds(p.duration) : elapsed(p.started_at, p.finished_at, now);
  return `pipeline #${p.id} ${p.status}  ${p.ref} @ ${shortSha(p.sha)}${time ? `  (${time})` : ''}`;
}

/** Plain lines for a pipeline and its builds: the header, then `stage  status  name  #id  duration` per build. */
export function pipelineLines(p: Pipeline, builds: readonly Build[], now = Date.now()): string[] {
  const lines = [pipelineHeader(p, now)];
  if (p.yaml_errors) lines.push(`  yaml errors: ${p.yaml_errors}`);
  const stages = stagesOf(latestBuilds(builds), builds);
  const nameWidth = Math.max(4, ...builds.map((b) => b.name.length));
  for (const stage of stages) {
    lines.push(`  ${stage.name} (${stage.status})`);
    for (const b of stage.builds) {
      lines.push(`    ${b.status.padEnd(8)}  ${b.name.padEnd(nameWidth)}  #${b.id}${elapsed(b.started_at, b.finished_at, now) ? `  ${elapsed(b.started_at, b.finished_at, now)}` : ''}`.trimEnd());
    }
  }
  return lines;
}

/** One line per build whose status changed since `before` (build id -> status); used by the non-TTY watch. */
export function changedBuildLines(before: ReadonlyMap<number, string>, builds: readonly Build[], now = Date.now()): string[] {
  const out: string[] = [];
  for (const b of latestBuilds(builds)) {
    if (before.get(b.id) === b.status) continue;
    const time = isFinal(b.status) ? elapsed(b.started_at, b.finished_at, now) : '';
    out.push(`${b.stage}: ${b.name} #${b.id} ${b.status}${time ? ` (${time})` : ''}`);
  }
  return out;
}
