// Webhook secret rotation: `idsvc partner rotate-webhook-secret` keeps the secret it
// replaces for a grace period, during which every delivery carries a signature with each secret
// (Standard Webhooks allows several, space-separated), so a partner can switch its receiver to the
// new secret without losing or rejecting an event. Both columns are NULL outside a grace period.
import type { Kysely } from 'kysely';

export function webhookSecretRotationMigration() {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema.alterTable('partners').addColumn('previous_webhook_secret', 'text').execute();
      await db.schema.alterTable('partners').addColumn('previous_webhook_secret_expires_at', 'bigint').execute();
    },
    async down(db: Kysely<unknown>): Promise<void> {
      await db.schema.alterTable('partners').dropColumn('previous_webhook_secret_expires_at').execute();
      await db.schema.alterTable('partners').dropColumn('previous_webhook_secret').execute();
    },
  };
}
