// Type-checked (tsc --noEmit) in the empty project that installed the tarball: the package's
// exports and .d.ts give a TypeScript partner the types, with nothing but the package installed.
import { IdsvcClient, IdsvcError, verifyWebhook, type UserService, type WebhookEvent } from '@idsvc/client';

const client = new IdsvcClient({ baseUrl: 'https://id.example.org', apiKey: 'key', apiToken: 'token' });
export const services: Promise<UserService[]> = client.returnServices('alice');
export const url: Promise<string> = client.widgetUrl('alice', { expiresInSeconds: 600 });
export const event: Promise<WebhookEvent> = verifyWebhook('whsec_AAAA', { 'webhook-id': 'x' }, '{}');
export const code = (e: unknown): string | null => (e instanceof IdsvcError ? e.code : null);
