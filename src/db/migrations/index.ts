// Every migration by name, in the order they run: the one list `migrate` (db/database.ts) applies.
import type { Migration } from 'kysely';
import type { DialectName } from '../handle.js';
import { initialMigration } from './001-initial.js';
import { siteMigration } from './002-site.js';
import { partnerChangesMigration } from './003-partner-changes.js';
import { partnerVersionMigration } from './004-partner-version.js';
import { servicePopularityMigration } from './005-service-popularity.js';
import { discoverableOffMigration } from './006-discoverable-off.js';
import { mailOwnershipMigration } from './007-mail-ownership.js';
import { visibilityAnnouncedMigration } from './008-visibility-announced.js';
import { webhookSecretRotationMigration } from './009-webhook-secret-rotation.js';
import { partnerTokenLookupMigration } from './010-partner-token-lookup.js';
import { discoveryMigration } from './011-discovery.js';
import { answerCacheFeedMigration } from './012-answer-cache-feed.js';
import { answerFeedTriggersMigration } from './013-answer-feed-triggers.js';
import { verificationEvidenceMigration } from './014-verification-evidence.js';
import { proofUrlsMigration } from './015-proof-urls.js';
import { oneChangeFeedMigration } from './016-one-change-feed.js';
import { photoAvatarsMigration } from './017-photo-avatars.js';
import { passkeysMigration } from './018-passkeys.js';
import { providerConnectionsMigration } from './019-provider-connections.js';
import { partnerApplicationsMigration } from './020-partner-applications.js';
import { partnerUsageMigration } from './021-partner-usage.js';
import { mastodonAppsMigration } from './022-mastodon-apps.js';
import { foreignKeyIndexesMigration } from './023-foreign-key-indexes.js';
import { partnerPushTagsMigration } from './024-partner-push-tags.js';

/** Every migration by name, in the order they run. */
export function migrationsFor(dialect: DialectName): Record<string, Migration> {
  return {
    '001-initial': initialMigration(dialect),
    '002-site': siteMigration(),
    '003-partner-changes': partnerChangesMigration(dialect),
    '004-partner-version': partnerVersionMigration(dialect),
    '005-service-popularity': servicePopularityMigration(dialect),
    '006-discoverable-off': discoverableOffMigration(dialect),
    '007-mail-ownership': mailOwnershipMigration(dialect),
    '008-visibility-announced': visibilityAnnouncedMigration(),
    '009-webhook-secret-rotation': webhookSecretRotationMigration(),
    '010-partner-token-lookup': partnerTokenLookupMigration(),
    '011-discovery': discoveryMigration(dialect),
    '012-answer-cache-feed': answerCacheFeedMigration(dialect),
    '013-answer-feed-triggers': answerFeedTriggersMigration(dialect),
    '014-verification-evidence': verificationEvidenceMigration(),
    '015-proof-urls': proofUrlsMigration(),
    '016-one-change-feed': oneChangeFeedMigration(dialect),
    '017-photo-avatars': photoAvatarsMigration(dialect),
    '018-passkeys': passkeysMigration(dialect),
    '019-provider-connections': providerConnectionsMigration(dialect),
    '020-partner-applications': partnerApplicationsMigration(dialect),
    '021-partner-usage': partnerUsageMigration(),
    '022-mastodon-apps': mastodonAppsMigration(),
    '023-foreign-key-indexes': foreignKeyIndexesMigration(),
    '024-partner-push-tags': partnerPushTagsMigration(dialect),
  };
}
