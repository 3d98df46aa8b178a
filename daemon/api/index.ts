/** Mounts every /api/v3 resource; one module per resource. */
import type { FastifyInstance } from 'fastify';
import userRoutes from './users.js';
import settingsRoutes from './settings.js';
import projectsRoutes from './projects.js';
import groupsRoutes from './groups.js';
import namespacesRoutes from './namespaces.js';
import membersRoutes from './members.js';

/** Registers all API v3 resource routes on the /api/v3 scope. */
export async function apiRoutes(api: FastifyInstance): Promise<void> {
  await api.register(userRoutes);
  await api.register(settingsRoutes);
  await api.register(projectsRoutes);
  await api.register(groupsRoutes);
  await api.register(namespacesRoutes);
  await api.register(membersRoutes);
}
