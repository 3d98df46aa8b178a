// Build variables sent to the runner, in GitLab 8.13's order (Ci::Build#variables). The runner
// exports all of them; when a key repeats the last one wins, so the order is the precedence.
import type { CiVariable } from './config-types.js';

/** The facts predefined variables are made from. */
export interface PredefinedVariablesInput {
  build: {
    id: number;
    token: string;
    sha: string;
    /** pipeline.before_sha; null → 40 zeros. */
    beforeSha?: string | null;
    ref: string;
    tag: boolean;
    name: string;
    stage: string;
    when?: string;
    /** The pipeline came from the trigger API. */
    triggered?: boolean;
  };
  server: { name?: string; version: string; revision: string };
  project: { id: number; path: string; pathWithNamespace: string; namespacePath: string; webUrl: string };
  pipeline: { id: number };
  /** The runner that took the build (absent before it is picked). */
  runner?: { id: number; description: string | null; tags: readonly string[] } | null;
  /** Container registry, when enabled: `host:port`, and the project image when the project uses it. */
  registry?: { hostPort: string; projectImage?: string | null } | null;
  /** The user who started the pipeline or build (absent for triggers). */
  user?: { id: number; email: string } | null;
}

/** Everything a build's variable list is made from. */
export interface BuildVariablesInput extends PredefinedVariablesInput {
  /** CiJob.variables (global merged with job). */
  yamlVariables?: readonly CiVariable[];
  /** Project secret variables (sent with public: false). */
  secretVariables?: readonly { key: string; value: string }[];
  /** Variables given to the trigger API (sent with public: false). */
  triggerVariables?: readonly { key: string; value: string }[];
}

const ZERO_SHA = '0'.repeat(40);

/** What CI_SERVER_VERSION/REVISION report: the GitLab version whose runner API this is. */
export const CI_SERVER = { name: 'GitLab', version: '8.13.0', revision: 'gantry' };

function v(key: string, value: string, isPublic = true): CiVariable {
  return { key, value, public: isPublic };
}

function buildPart(input: PredefinedVariablesInput): CiVariable[] {
  const { build, server } = input;
  const out = [
    v('CI', 'true'),
    v('GITLAB_CI', 'true'),
    v('CI_BUILD_ID', String(build.id)),
    v('CI_BUILD_TOKEN', build.token, false),
    v('CI_BUILD_REF', build.sha),
    v('CI_BUILD_BEFORE_SHA', build.beforeSha || ZERO_SHA),
    v('CI_BUILD_REF_NAME', build.ref),
    v('CI_BUILD_NAME', build.name),
    v('CI_BUILD_STAGE', build.stage),
    v('CI_SERVER_NAME', server.name ?? 'GitLab'),
    v('CI_SERVER_VERSION', server.version),
    v('CI_SERVER_REVISION', server.revision),
  ];
  if (build.tag) out.push(v('CI_BUILD_TAG', build.ref));
  if (build.triggered) out.push(v('CI_BUILD_TRIGGERED', 'true'));
  if (build.when === 'manual') out.push(v('CI_BUILD_MANUAL', 'true'));
  return out;
}

function contextPart(input: PredefinedVariablesInput): CiVariable[] {
  const { project, pipeline, runner, registry } = input;
  const out = [
    v('CI_PROJECT_ID', String(project.id)),
    v('CI_PROJECT_NAME', project.path),
    v('CI_PROJECT_PATH', project.pathWithNamespace),
    v('CI_PROJECT_NAMESPACE', project.namespacePath),
    v('CI_PROJECT_URL', project.webUrl),
    v('CI_PIPELINE_ID', String(pipeline.id)),
  ];
  if (runner) {
    out.push(
      v('CI_RUNNER_ID', String(runner.id)),
      v('CI_RUNNER_DESCRIPTION', runner.description ?? ''),
      v('CI_RUNNER_TAGS', runner.tags.join(', ')),
    );
  }
  if (registry) {
    out.push(v('CI_REGISTRY', registry.hostPort));
    if (registry.projectImage) out.push(v('CI_REGISTRY_IMAGE', registry.projectImage));
  }
  return out;
}

function userPart(input: PredefinedVariablesInput): CiVariable[] {
  return input.user ? [v('GITLAB_USER_ID', String(input.user.id)), v('GITLAB_USER_EMAIL', input.user.email)] : [];
}

/**
 * GitLab 8.13's predefined variables of a build: build (CI, GITLAB_CI, CI_BUILD_*, CI_SERVER_*;
 * CI_BUILD_TAG for tags, CI_BUILD_TRIGGERED for triggers, CI_BUILD_MANUAL for manual jobs),
 * project (CI_PROJECT_*), pipeline, runner, registry, then GITLAB_USER_ID/EMAIL. CI_SERVER,
 * CI_PROJECT_DIR and CI_BUILD_REPO are set by the runner itself, not sent.
 */
export function predefinedVariables(input: PredefinedVariablesInput): CiVariable[] {
  return [...buildPart(input), ...contextPart(input), ...userPart(input)];
}

/**
 * The full `variables` list for the runner, in 8.13 order: predefined (without user) → YAML →
 * user → project secret variables → trigger variables.
 */
export function buildVariables(input: BuildVariablesInput): CiVariable[] {
  return [
    ...buildPart(input),
    ...contextPart(input),
    ...(input.yamlVariables ?? []).map((x) => v(x.key, x.value, x.public)),
    ...userPart(input),
    ...(input.secretVariables ?? []).map((x) => v(x.key, x.value, false)),
    ...(input.triggerVariables ?? []).map((x) => v(x.key, x.value, false)),
  ];
}

/**
 * 8.13's ExpandVariables.expand: `$NAME`, `${NAME}` and `%NAME%` replaced by the variable's value (the last one of a
 * key wins), an unknown name by nothing. Used for an environment's name and url when its deployment is recorded.
 */
export function expandVariables(value: string, variables: readonly { key: string; value: string }[]): string {
  const byKey = new Map(variables.map((x) => [x.key, x.value]));
  return value.replace(/\$([a-zA-Z_][a-zA-Z0-9_]*)|\$\{([a-zA-Z_][a-zA-Z0-9_]*)\}|%([a-zA-Z_][a-zA-Z0-9_]*)%/g,
    (_m, a?: string, b?: string, c?: string) => byKey.get((a ?? b ?? c)!) ?? '');
}

/** A build's stored yaml_variables (JSON: a list of {key, value, public}, or an older {key: value} hash); [] when unreadable. */
export function parseYamlVariables(text: string | null): CiVariable[] {
  let v: unknown;
  try {
    v = text ? JSON.parse(text) : [];
  } catch {
    return [];
  }
  if (Array.isArray(v)) {
    return v
      .filter((x): x is { key: unknown; value: unknown; public?: unknown } => !!x && typeof x === 'object' && 'key' in x)
      .map((x) => ({ key: String(x.key), value: String(x.value ?? ''), public: x.public !== false }));
  }
  if (v && typeof v === 'object') return Object.entries(v).map(([key, value]) => ({ key, value: String(value ?? ''), public: true }));
  return [];
}
