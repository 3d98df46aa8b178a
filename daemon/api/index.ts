/** Mounts every /api/v3 resource; one module per resource. */
import type { FastifyInstance } from 'fastify';
import userRoutes from './users.js';
import settingsRoutes from './settings.js';

/** Registers all API v3 resource routes on the /api/v3 scope. */
export async function apiRoutes(api: FastifyInstance): Promise<void> {
  await api.register(userRoutes);
  await api.register(settingsRoutes);
}
