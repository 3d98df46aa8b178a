/**
 * The project and repository blocks of every webhook payload (GitLab 8.13's Project#hook_attrs and the repository
 * hash of Gitlab::DataBuilder), written once for the issue, merge request, note, push, build and pipeline hooks.
 */
import type { NamespaceRow, ProjectRow } from '../db/schema.js';
import type { projectUrls } from '../web-urls.js';

type Urls = Pick<ReturnType<typeof projectUrls>, 'web_url' | 'ssh_url_to_repo' | 'http_url_to_repo'>;
type Project = Pick<ProjectRow, 'name' | 'description' | 'path' | 'visibilityLevel' | 'defaultBranch'>;
type Namespace = Pick<NamespaceRow, 'name' | 'path'>;

/** Project#hook_attrs(backward: false), the pipeline hook's: name, description, URLs, namespace, visibility, path, default branch. */
export function pipelineProjectHookAttrs(ns: Namespace, project: Project, urls: Urls) {
  return {
    name: project.name, description: project.description, web_url: urls.web_url, avatar_url: null, git_ssh_url: urls.ssh_url_to_repo,
    git_http_url: urls.http_url_to_repo, namespace: ns.name, visibility_level: project.visibilityLevel,
    path_with_namespace: `${ns.path}/${project.path}`, default_branch: project.defaultBranch,
  };
}

/** Project#hook_attrs, every other hook's: the pipeline's attributes and the old homepage, url, ssh_url and http_url. */
export function projectHookAttrs(ns: Namespace, project: Project, urls: Urls) {
  return {
    ...pipelineProjectHookAttrs(ns, project, urls),
    homepage: urls.web_url, url: urls.ssh_url_to_repo, ssh_url: urls.ssh_url_to_repo, http_url: urls.http_url_to_repo,
  };
}

/** The repository block of the issue, merge request and note hooks: name, url, description, homepage. */
export function repositoryHookAttrs(project: Project, urls: Urls) {
  return { name: project.name, url: urls.ssh_url_to_repo, description: project.description, homepage: urls.web_url };
}

/** The repository block of the push and build hooks: repositoryHookAttrs with the clone URLs and the visibility. */
export function repositoryHookAttrsWithGitUrls(project: Project, urls: Urls) {
  return {
    ...repositoryHookAttrs(project, urls),
    git_http_url: urls.http_url_to_repo, git_ssh_url: urls.ssh_url_to_repo, visibility_level: project.visibilityLevel,
  };
}
