/**
 * The shell executor: runs one build end to end. Stages (as GitLab Runner's): get sources -> download
 * dependency artifacts -> the build script (before_script + script) -> after_script -> upload artifacts -> final
 * PUT with the full trace. The trace streams to the server while it runs; a cancel, a timeout or a forced shutdown
 * kills the stage's whole process group.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { archiveName, createArchive, dedupePaths, extractArchive, matchArtifactPaths, shouldUpload, untrackedFiles } from './artifacts.js';
import type { RunnerEntry } from './config.js';
import { buildVariables, cleanUrl, processEnvironment, projectDirName, runnerDirName, variable } from './environment.js';
import { getSources, gitDepth, gitStrategy } from './git.js';
import type { Logger } from './log.js';
import { VERSION, type CiClient } from './network.js';
import { startProcess, type ProcessResult, type RunningProcess } from './process.js';
import { generateScript, isTrue } from './script.js';
import { TraceBuffer } from './trace.js';
import { DEFAULT_TIMING, TraceUploader, type UploaderTiming } from './trace-uploader.js';
import type { BuildPayload } from './types.js';

/** The default build timeout when the server sends none (runner 1.x: 7200 s). */
export const DEFAULT_TIMEOUT_S = 7200;
/** after_script may run at most this long (runner 1.x: 5 minutes). */
export const AFTER_SCRIPT_TIMEOUT_MS = 5 * 60 * 1000;

/** How a build ended on the runner. */
export type JobOutcome = 'success' | 'failed';

/** What a BuildJob needs. */
export interface JobOptions {
  client: CiClient;
  runner: RunnerEntry;
  build: BuildPayload;
  buildsDir: string;
  log: Logger;
  timing?: UploaderTiming;
  /** The environment builds start from (the runner's own by default). */
  baseEnv?: NodeJS.ProcessEnv;
  /** Delay between retries of the final update (ms; runner 1.x: 3 s). */
  finalRetryMs?: number;
  /** First delay between retries of an artifacts upload or download (ms, doubled each time; default 1 s). */
  transferRetryMs?: number;
}

/** Attempts of an artifacts upload: runner 1.x makes 3, 1 s apart; 5 with a doubling delay outlast a daemon's restart. */
export const UPLOAD_ATTEMPTS = 5;

/**
 * The delay before retry number `attempt` (1 = the first retry) of a request that failed on the way (a 502 from the
 * balancer, a refused or reset connection): `firstMs` doubled each time, at most 8 times `firstMs` (1, 2, 4, 8, 8 s...).
 */
export function retryDelay(attempt: number, firstMs = 1000): number {
  return firstMs * 2 ** Math.min(Math.max(attempt - 1, 0), 3);
}

const busyDirs = new Set<string>();

/** Claim the project dir of a build: `<builds>/<runner>/<project path>`, or `-2`, `-3`... while others use it. */
function claimDir(base: string): string {
  for (let i = 1; ; i++) {
    const dir = i === 1 ? base : `${base}-${i}`;
    if (!busyDirs.has(dir)) {
      busyDirs.add(dir);
      return dir;
    }
  }
}

const green = (s: string) => `\x1b[32;1m${s}\x1b[0;m\n`;
const red = (s: string) => `\x1b[31;1m${s}\x1b[0;m\n`;
const yellow = (s: string) => `\x1b[0;33m${s}\x1b[0;m\n`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** One build being run by the shell executor. */
export class BuildJob {
  readonly trace = new TraceBuffer();
  private current: RunningProcess | null = null;
  private abortReason: string | null = null;
  private readonly uploader: TraceUploader;
  private finalGiveUp = false;

  constructor(private readonly o: JobOptions) {
    this.uploader = new TraceUploader(
      o.client, { id: o.build.id, token: o.build.token }, o.runner.token, this.trace,
      (reason) => this.abort(reason), o.timing ?? DEFAULT_TIMING,
      (m) => o.log.debug(m, { build: o.build.id }),
    );
  }

  /** The build id. */
  get id(): number {
    return this.o.build.id;
  }

  /** Stop the build now (cancel, timeout, forced shutdown): kills the running stage; the build ends as failed. */
  abort(reason: string): void {
    if (this.abortReason) return;
    this.abortReason = reason;
    this.o.log.info('aborting build', { build: this.id, reason });
    this.current?.kill('SIGKILL');
  }

  /** Give up retrying the final update (the runner is being forced to exit). */
  giveUpFinalUpdate(): void {
    this.finalGiveUp = true;
  }

  private notice(text: string): void {
    this.trace.appendNotice(text);
    this.uploader.notify();
  }

  /** Run one process as a stage step, its output into the trace; killed on abort (and after `timeoutMs`). */
  private async exec(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv, timeoutMs?: number): Promise<ProcessResult> {
    if (this.abortReason) return { code: null, signal: 'SIGKILL' };
    const proc = startProcess(command, args, {
      cwd, env,
      onOutput: (chunk) => {
        this.trace.append(chunk);
        this.uploader.notify();
      },
    });
    this.current = proc;
    const timer = timeoutMs ? setTimeout(() => proc.kill('SIGKILL'), timeoutMs) : null;
    const result = await proc.done;
    if (timer) clearTimeout(timer);
    this.current = null;
    if (result.error) this.notice(red(`ERROR: cannot run ${command}: ${result.error.message}`));
    return result;
  }

  /** Run the build and report its end to the server. Never throws. */
  async run(): Promise<JobOutcome> {
    const { build, runner, log, client } = this.o;
    const base = join(this.o.buildsDir, runnerDirName(runner), projectDirName(build.repo_url, build.project_id));
    const dir = claimDir(base);
    const tmpDir = `${dir}.tmp`;
    const timeoutS = build.timeout && build.timeout > 0 ? build.timeout : DEFAULT_TIMEOUT_S;
    const timeout = setTimeout(() => this.abort(`execution took longer than ${timeoutS} seconds`), timeoutS * 1000);
    let outcome: JobOutcome = 'failed';
    log.info('build started', { build: build.id, project: build.project_id, ref: build.ref, sha: build.sha.slice(0, 8), name: build.name, dir });
    try {
      this.trace.appendNotice(`Running with gantry-runner ${VERSION}\n  on ${runner.description || 'runner'} (${runner.token.slice(0, 8)})\n`);
      this.trace.appendNotice('Using Shell executor...\n');
      const started = await client.updateBuild(build.id, runner.token, 'running');
      if (started.kind === 'abort') {
        log.warn('the server no longer wants this build', { build: build.id, reason: started.reason });
        return 'failed';
      }
      this.uploader.start();
      outcome = await this.stages(dir, tmpDir);
    } catch (e) {
      this.notice(red(`ERROR: Build failed (system failure): ${(e as Error).message}`));
      outcome = 'failed';
    } finally {
      clearTimeout(timeout);
      busyDirs.delete(dir);
      rmSync(tmpDir, { recursive: true, force: true });
    }
    if (this.abortReason) outcome = 'failed';
    if (outcome === 'success') this.notice(green('Build succeeded'));
    await this.uploader.finish();
    await this.finalUpdate(outcome);
    log.info('build finished', { build: build.id, status: outcome, ...(this.abortReason ? { reason: this.abortReason } : {}) });
    return outcome;
  }

  /** Every stage after the running PUT; returns the outcome (the failure already written to the trace). */
  private async stages(dir: string, tmpDir: string): Promise<JobOutcome> {
    const { build } = this.o;
    rmSync(tmpDir, { recursive: true, force: true });
    mkdirSync(tmpDir, { recursive: true, mode: 0o700 });
    const { vars, files } = buildVariables(build, dir, tmpDir);
    for (const f of files) writeFileSync(f.path, f.content, { mode: 0o600 });
    const env = processEnvironment(this.o.baseEnv ?? process.env, vars);
    const gitEnv = { ...env, GIT_TERMINAL_PROMPT: '0', GIT_ASKPASS: 'echo', GCM_INTERACTIVE: 'never' };
    const debugTrace = isTrue(variable(vars, 'CI_DEBUG_TRACE'));

    const sourcesOk = await getSources(
      {
        git: (args, cwd) => this.exec('git', ['-c', 'credential.helper=', ...args], cwd, gitEnv),
        notice: (text) => this.notice(text),
      },
      build, dir,
      { strategy: gitStrategy(build, variable(vars, 'GIT_STRATEGY')), depth: gitDepth(variable(vars, 'GIT_DEPTH')), submodules: variable(vars, 'GIT_SUBMODULE_STRATEGY') },
    );
    if (!sourcesOk) return this.failed(`getting the sources from ${cleanUrl(build.repo_url)} failed`);
    if (!(await this.downloadArtifacts(dir, tmpDir, vars))) return this.failed('downloading the artifacts of earlier builds failed');

    const script = join(tmpDir, 'script.sh');
    writeFileSync(script, generateScript(build.commands, { debugTrace }), { mode: 0o700 });
    const result = await this.exec('bash', ['--noprofile', '--norc', script], dir, env);
    let succeeded = result.code === 0 && !this.abortReason;

    const after = build.options?.after_script;
    if (Array.isArray(after) && after.length > 0 && !this.abortReason) {
      this.notice(green('Running after script...'));
      const afterScript = join(tmpDir, 'after_script.sh');
      writeFileSync(afterScript, generateScript(after, { debugTrace }), { mode: 0o700 });
      await this.exec('bash', ['--noprofile', '--norc', afterScript], dir, env, AFTER_SCRIPT_TIMEOUT_MS);
    }

    if (!this.abortReason && shouldUpload(build.options?.artifacts, succeeded)) {
      if (!(await this.uploadArtifacts(dir, tmpDir, gitEnv))) succeeded = false;
    }
    if (this.abortReason) return this.failed(this.abortReason);
    if (!succeeded) {
      if (result.code !== 0) return this.failed(result.signal ? `killed by ${result.signal}` : `exit status ${result.code}`);
      return this.failed('uploading the artifacts failed');
    }
    return 'success';
  }

  private failed(reason: string): JobOutcome {
    this.notice(red(`ERROR: Build failed: ${this.abortReason ?? reason}`));
    return 'failed';
  }

  /** Download and extract the artifacts of the dependencies this build may use. */
  private async downloadArtifacts(dir: string, tmpDir: string, vars: Array<[string, string]>): Promise<boolean> {
    const { build, client } = this.o;
    const allowed = build.options?.dependencies;
    const deps = (build.depends_on_builds ?? []).filter(
      (d) => d && d.artifacts_file?.filename && (!Array.isArray(allowed) || allowed.includes(d.name)),
    );
    const attempts = Math.min(10, Math.max(1, Number(variable(vars, 'ARTIFACT_DOWNLOAD_ATTEMPTS')) || 1));
    for (const dep of deps) {
      if (this.abortReason) return false;
      this.notice(green(`Downloading artifacts for ${dep.name} (${dep.id})...`));
      const file = join(tmpDir, `artifacts-${dep.id}`);
      let ok = false;
      for (let attempt = 1; attempt <= attempts + 2 && !ok; attempt++) {
        const res = await client.downloadArtifacts(dep.id, dep.token, file);
        if (res.ok) ok = true;
        else {
          this.notice(yellow(`WARNING: Downloading artifacts from coordinator... ${res.message}`));
          if (!res.retry || attempt === attempts + 2 || this.abortReason) break;
          this.o.log.warn('artifacts download failed; retrying', { build: build.id, dependency: dep.id, attempt, error: res.message });
          await sleep(retryDelay(attempt, this.o.transferRetryMs));
        }
      }
      if (!ok) {
        this.notice(red('ERROR: Downloading artifacts from coordinator... failed'));
        return false;
      }
      try {
        await extractArchive(file, dir);
      } catch (e) {
        this.notice(red(`ERROR: Extracting the artifacts of ${dep.name}: ${(e as Error).message}`));
        return false;
      } finally {
        rmSync(file, { force: true });
      }
      this.notice('Downloading artifacts from coordinator... ok\n');
    }
    return true;
  }

  /** Archive the artifacts paths (and untracked files) as tar.gz and upload them; false when the upload failed. */
  private async uploadArtifacts(dir: string, tmpDir: string, env: NodeJS.ProcessEnv): Promise<boolean> {
    const { build, client } = this.o;
    const options = build.options!.artifacts!;
    this.notice(green('Uploading artifacts...'));
    const paths: string[] = [];
    if (options.untracked) {
      const untracked = await untrackedFiles(dir, env);
      this.notice(`untracked: found ${untracked.length} files\n`);
      paths.push(...untracked);
    }
    for (const m of matchArtifactPaths(dir, Array.isArray(options.paths) ? options.paths : [])) {
      if (m.error) this.notice(yellow(`WARNING: ${m.pattern}: ${m.error}`));
      else if (m.matches.length === 0) this.notice(yellow(`WARNING: ${m.pattern}: no matching files`));
      else this.notice(`${m.pattern}: found ${m.files} matching file${m.files === 1 ? '' : 's'}\n`);
      paths.push(...m.matches);
    }
    const unique = dedupePaths(paths);
    if (unique.length === 0) {
      this.notice(yellow('WARNING: No files to upload'));
      return true;
    }
    const name = archiveName(options);
    const file = join(tmpDir, name);
    try {
      await createArchive(dir, unique, file);
    } catch (e) {
      this.notice(red(`ERROR: Creating the artifacts archive: ${(e as Error).message}`));
      return false;
    }
    for (let attempt = 1; attempt <= UPLOAD_ATTEMPTS; attempt++) {
      const res = await client.uploadArtifacts(build.id, build.token, file, name, options.expire_in);
      if (res.ok) {
        this.notice(`Uploading artifacts to coordinator... ok        id=${build.id} responseStatus=201 Created\n`);
        return true;
      }
      this.notice(yellow(`WARNING: Uploading artifacts to coordinator... ${res.message}`));
      if (!res.retry || attempt === UPLOAD_ATTEMPTS || this.abortReason) break;
      this.o.log.warn('artifacts upload failed; retrying', { build: build.id, attempt, error: res.message });
      await sleep(retryDelay(attempt, this.o.transferRetryMs));
    }
    this.notice(red('ERROR: Uploading artifacts to coordinator... failed'));
    return false;
  }

  /** The final PUT with the state and the full trace, retried (every few seconds) until the server answers 200/403/404. */
  private async finalUpdate(outcome: JobOutcome): Promise<void> {
    const { client, build, runner, log } = this.o;
    for (let attempt = 1; ; attempt++) {
      const res = await client.updateBuild(build.id, runner.token, outcome, this.trace.text());
      if (res.kind !== 'failed') return;
      log.warn('final build update failed; retrying', { build: build.id, error: res.message, attempt });
      if (this.finalGiveUp && attempt >= 2) {
        log.error('giving up on the final build update', { build: build.id });
        return;
      }
      await sleep(this.o.finalRetryMs ?? 3000);
    }
  }
}
