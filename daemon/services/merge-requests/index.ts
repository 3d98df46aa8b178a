/**
 * The merge request domain (GitLab 8.x app/services/merge_requests/): finding and reading merge requests, create,
 * update, close/reopen, delete, their diff versions refreshed on every push, merge status, closes_issues (and, from
 * merge.ts, the merge itself). Each write is one transaction with its events, todos, system notes and hook deliveries.
 */
export * from './find.js';
export * from './diffs.js';
export * from './closes-issues.js';
export * from './write.js';
export * from './refresh.js';
export * from './lists.js';
export * from './pipelines.js';
