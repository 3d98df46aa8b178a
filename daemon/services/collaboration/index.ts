/**
 * The collaboration domain (issues, labels, milestones, notes, award emoji, subscriptions, todos, mentions): what it
 * offers to routes, presenters and merge requests. Each service writes in one transaction and queues its events,
 * todos and hook deliveries inside it.
 */
export * from './issues.js';
export * from './issue-lists.js';
export * from './issue-move.js';
export * from './labels.js';
export * from './milestones.js';
export * from './subscriptions.js';
export * from './notes.js';
export * from './system-notes.js';
export * from './award-emoji.js';
export * from './mentions.js';
export * from './todos.js';
export type { Target } from './tx.js';
