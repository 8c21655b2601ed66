// One module per API operation (SPEC §4); each registers itself through apiRoute().
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../context.js';
import { apiRoute, type ApiOperation } from '../http/api-route.js';
import { serviceDetails } from './service-details.js';

export const OPERATIONS: ApiOperation[] = [serviceDetails];

export function registerApi(app: FastifyInstance, ctx: AppContext): void {
  for (const op of OPERATIONS) apiRoute(app, ctx, op);
}
