// A partner's push names only that partner's view of the person, `i{partner_id}.{subject_id}`
// (services/answer-cache.ts, pushTag), not the person's subject `s{subject_id}`: a subject is
// shared by every partner that names the person, so each push used to drop every partner's cached
// answers about them, though only the pushing partner's own entries had changed (a private view
// reads the partner_identities rows of its own partner alone). On the benchmark's mix that was a
// quarter of the answers the cache lost. A push that flows into a linked account still changes
// central_identities, which names `u{user}` and drops every view of the person, as before.
//
// Code from before this migration tags a private view with `s{subject}` only, so run against this
// schema it would keep serving a partner's private view after that partner's own push: stop every
// instance before starting this version (docs/deploy.md, "Upgrades").
import { sql, type Kysely } from 'kysely';
import type { DialectName } from '../handle.js';
import { PARTNER_IDENTITY_TAGS_012, pgAnswerChangedFunction } from './012-answer-cache-feed.js';
import { answerFeedTriggersMigration } from './013-answer-feed-triggers.js';

const PG_PUSH_TAG = "'i' || (r->>'partner_id') || '.' || (r->>'subject_id')";

/** SQLite: the tag of a partner_identities row (NEW or OLD). */
const pushTagOf = (row: 'NEW' | 'OLD') => `'i' || ${row}.partner_id || '.' || ${row}.subject_id`;

const SQLITE_TRIGGERS = {
  insert: [`INSERT INTO answer_changes (tag) VALUES (${pushTagOf('NEW')})`],
  delete: [`INSERT INTO answer_changes (tag) VALUES (${pushTagOf('OLD')})`],
  // The old row's tag too when the row moved to another partner or subject: that view lost an entry.
  update: [
    `INSERT INTO answer_changes (tag) VALUES (${pushTagOf('NEW')})`,
    `INSERT INTO answer_changes (tag) SELECT ${pushTagOf('OLD')} WHERE OLD.partner_id IS NOT NEW.partner_id OR OLD.subject_id IS NOT NEW.subject_id`,
  ],
} as const;

async function dropSqliteTriggers(db: Kysely<unknown>): Promise<void> {
  for (const event of Object.keys(SQLITE_TRIGGERS)) await sql.raw(`DROP TRIGGER IF EXISTS answer_feed_partner_identities_${event}`).execute(db);
}

export function partnerPushTagsMigration(dialect: DialectName) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      if (dialect === 'postgres') {
        await sql.raw(pgAnswerChangedFunction(PG_PUSH_TAG)).execute(db);
        return;
      }
      await dropSqliteTriggers(db);
      for (const [event, inserts] of Object.entries(SQLITE_TRIGGERS)) {
        await sql
          .raw(`CREATE TRIGGER answer_feed_partner_identities_${event} AFTER ${event.toUpperCase()} ON partner_identities
            BEGIN ${inserts.map((i) => `${i};`).join(' ')} END`)
          .execute(db);
      }
    },
    async down(db: Kysely<unknown>): Promise<void> {
      if (dialect === 'postgres') {
        await sql.raw(pgAnswerChangedFunction(PARTNER_IDENTITY_TAGS_012)).execute(db);
        return;
      }
      // Migration 013's triggers for every table: the others are unchanged by putting them back.
      await dropSqliteTriggers(db);
      await answerFeedTriggersMigration(dialect).up(db);
    },
  };
}
