// One module per API operation (SPEC §4); each registers itself through apiRoute().
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../context.js';
import { apiRoute, type ApiOperation } from '../http/api-route.js';
import { returnContacts } from './return-contacts.js';
import { returnProfile } from './return-profile.js';
import { returnServices } from './return-services.js';
import { reverseLookup } from './reverse-lookup.js';
import { serviceCollectionWidget } from './service-collection-widget.js';
import { serviceDetails } from './service-details.js';
import { syncUser } from './sync-user.js';
import { unsyncUser } from './unsync-user.js';
import { updateService } from './update-service.js';

export const OPERATIONS: ApiOperation[] = [
  returnServices,
  serviceDetails,
  updateService,
  syncUser,
  unsyncUser,
  returnProfile,
  reverseLookup,
  returnContacts,
  serviceCollectionWidget,
];

export function registerApi(app: FastifyInstance, ctx: AppContext): void {
  for (const op of OPERATIONS) apiRoute(app, ctx, op);
}
