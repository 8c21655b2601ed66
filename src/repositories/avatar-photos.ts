// The accounts' photo avatars (migration 017): the stored picture and its digest. The digest is
// read apart from the picture, so that serving from memory costs one small row.
import type { Handle, Write } from '../db/handle.js';

export interface StoredPhoto {
  image: Buffer;
  mediaType: string;
  digest: string;
  side: number;
}

export interface PhotoStamp {
  digest: string;
  updatedAt: number;
}

export async function savePhoto(db: Write, userRef: number, photo: StoredPhoto, now: number): Promise<void> {
  const values = { image: photo.image, media_type: photo.mediaType, digest: photo.digest, side: photo.side, updated_at: now };
  await db.kysely
    .insertInto('avatar_photos')
    .values({ user_ref: userRef, ...values })
    .onConflict((oc) => oc.column('user_ref').doUpdateSet(values))
    .execute();
}

/** Whether there was a photo to remove. */
export async function deletePhoto(db: Write, userRef: number): Promise<boolean> {
  const result = await db.kysely.deleteFrom('avatar_photos').where('user_ref', '=', userRef).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

export async function photoStampOf(db: Handle, userRef: number): Promise<PhotoStamp | undefined> {
  const row = await db.kysely.selectFrom('avatar_photos').select(['digest', 'updated_at']).where('user_ref', '=', userRef).executeTakeFirst();
  return row && { digest: row.digest, updatedAt: Number(row.updated_at) };
}

/** The picture, when it is still the one with this digest (it may have changed since the digest was read). */
export async function photoByDigest(db: Handle, userRef: number, digest: string): Promise<StoredPhoto | undefined> {
  const row = await db.kysely
    .selectFrom('avatar_photos')
    .select(['image', 'media_type', 'digest', 'side'])
    .where('user_ref', '=', userRef)
    .where('digest', '=', digest)
    .executeTakeFirst();
  return row && { image: Buffer.from(row.image), mediaType: row.media_type, digest: row.digest, side: row.side };
}

/** The user's photo with its time, for the data export. */
export async function photoOfUser(db: Handle, userRef: number): Promise<(StoredPhoto & { updatedAt: number }) | undefined> {
  const row = await db.kysely
    .selectFrom('avatar_photos')
    .select(['image', 'media_type', 'digest', 'side', 'updated_at'])
    .where('user_ref', '=', userRef)
    .executeTakeFirst();
  return row && { image: Buffer.from(row.image), mediaType: row.media_type, digest: row.digest, side: row.side, updatedAt: Number(row.updated_at) };
}
