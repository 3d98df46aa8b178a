/** Mounts every /api/v3 resource; one module per resource. */
import type { FastifyInstance } from 'fastify';
import userRoutes from './users.js';
import settingsRoutes from './settings.js';
import projectsRoutes from './projects.js';
import groupsRoutes from './groups.js';
import namespacesRoutes from './namespaces.js';
import membersRoutes from './members.js';
import repositoryFileRoutes from './repository-files.js';
import commitRoutes from './commits.js';
import branchRoutes from './branches.js';
import tagRoutes from './tags.js';
import repositoryRoutes from './repository.js';
import buildRoutes from './builds.js';
import pipelineRoutes from './pipelines.js';
import commitStatusRoutes from './commit-statuses.js';

/** Registers all API v3 resource routes on the /api/v3 scope. */
export async function apiRoutes(api: FastifyInstance): Promise<void> {
  await api.register(userRoutes);
  await api.register(settingsRoutes);
  await api.register(projectsRoutes);
  await api.register(groupsRoutes);
  await api.register(namespacesRoutes);
  await api.register(membersRoutes);
  await api.register(repositoryFileRoutes);
  await api.register(commitRoutes);
  await api.register(branchRoutes);
  await api.register(tagRoutes);
  await api.register(repositoryRoutes);
  await api.register(buildRoutes);
  await api.register(pipelineRoutes);
  await api.register(commitStatusRoutes);
  await api.register((await import('./runners.js')).default);
  await api.register((await import('./variables.js')).default);
  await api.register((await import('./issues.js')).default);
  await api.register((await import('./labels.js')).default);
  await api.register((await import('./milestones.js')).default);
  await api.register((await import('./todos.js')).default);
  await api.register((await import('./notes.js')).default);
  await api.register((await import('./award-emoji.js')).default);
  await api.register((await import('./merge-requests.js')).default);
  await api.register((await import('./merge-request-merge.js')).default);
  await api.register((await import('./applications.js')).default);
  await api.register((await import('./keys.js')).default);
  await api.register((await import('./deploy-keys.js')).default);
  await api.register((await import('./snippets.js')).default);
  await api.register((await import('./triggers.js')).default);
  await api.register((await import('./environments.js')).default);
  await api.register((await import('./deployments.js')).default);
  await api.register((await import('./system-hooks.js')).default);
  await api.register((await import('./services.js')).default);
  await api.register((await import('./version.js')).default);
  await api.register((await import('./project-users.js')).default);
  await api.register((await import('./merge-request-versions.js')).default);
  await api.register((await import('./templates.js')).default);
  await api.register((await import('./access-requests.js')).default);
  await api.register((await import('./boards.js')).default);
}
