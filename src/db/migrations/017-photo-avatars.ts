// Photo avatars: one picture per account, as the site stored it after decoding and re-encoding the
// upload (square, metadata stripped). `digest` names the stored bytes, so a server can tell whether
// the copy in its memory is current without reading the picture again.
import type { Kysely } from 'kysely';

type Dialect = 'sqlite' | 'postgres';

export function photoAvatarsMigration(dialect: Dialect) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('avatar_photos')
        .addColumn('user_ref', 'integer', (c) => c.primaryKey().references('users.id').onDelete('cascade'))
        .addColumn('image', dialect === 'postgres' ? 'bytea' : 'blob', (c) => c.notNull())
        .addColumn('media_type', 'text', (c) => c.notNull())
        .addColumn('digest', 'text', (c) => c.notNull())
        .addColumn('side', 'integer', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .execute();
    },
    async down(db: Kysely<unknown>): Promise<void> {
      await db.schema.dropTable('avatar_photos').execute();
    },
  };
}
