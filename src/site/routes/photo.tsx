// The photo page (/account/photo): upload a picture for the avatar, remove it, and the owner's own
// preview, which unlike /avatar/{hash} shows the photo while the account is not visible.
import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.js';
import { ApiError } from '../../domain/errors.js';
import { profileFields } from '../../domain/profile.js';
import { isVisible } from '../../domain/visibility.js';
import { PHOTO_UPLOAD_MAX_BYTES, PhotoRefused, photoAvatar, preparePhoto } from '../../gravatar/photos.js';
import { deletePhoto, photoStampOf, savePhoto } from '../../repositories/avatar-photos.js';
import type { User } from '../../repositories/users.js';
import { typed } from '../../http/typed-app.js';
import { formSchema, optionalText, seeOther, sendPage, SITE } from '../http.js';
import { acceptFileForms, fileField } from '../multipart.js';
import { csrfToken } from '../session.js';
import { PhotoPage } from '../views/Photo.js';
import { displayName } from '../views/PublicProfile.js';

const NOTICES: Record<string, string> = {
  saved: 'Your photo is saved.',
  removed: 'Your photo is removed. Your avatar shows your initials again.',
};

/** Decoding a picture takes real work: a few uploads a minute is plenty for a person. */
const UPLOADS_PER_MINUTE = 6;
/** The preview's size on the photo page (twice its CSS size, for sharp screens). */
const PREVIEW_SIZE = 160;

async function photoPage(
  ctx: AppContext,
  request: FastifyRequest,
  reply: FastifyReply,
  user: User,
  extra: { notice?: string | undefined; error?: string | undefined },
  status = 200,
) {
  const stamp = await photoStampOf(ctx.db, user.id);
  const name = displayName({ userId: user.user_id, fields: profileFields(user, 'public') });
  return sendPage(
    reply,
    <PhotoPage
      viewer={{ userId: user.user_id, csrf: await csrfToken(ctx, request, reply) }}
      displayName={name}
      photoDigest={stamp?.digest}
      visible={isVisible(user)}
      avatarUrl={`${ctx.config.baseUrl}/avatar/${user.user_id}`}
      maxMegabytes={PHOTO_UPLOAD_MAX_BYTES / 1024 / 1024}
      {...extra}
    />,
    status,
  );
}

/** The photo routes: registered inside the account routes, whose preHandler sets request.user. */
export function photoRoutes(ctx: AppContext): FastifyPluginAsync {
  return async (plugin) => {
    // Only these routes take multipart bodies; every other form stays urlencoded.
    acceptFileForms(plugin, PHOTO_UPLOAD_MAX_BYTES);
    const app = typed(plugin);
    const db = ctx.db;

    app.get('/account/photo', { config: SITE, schema: { hide: true, querystring: Type.Object({ msg: optionalText(20) }) } }, async (request, reply) => {
      const msg = request.query.msg;
      return photoPage(ctx, request, reply, request.user, { notice: msg ? NOTICES[msg] : undefined });
    });

    app.get('/account/photo/image', { config: SITE, schema: { hide: true, querystring: Type.Object({ v: optionalText(64) }) } }, async (request, reply) => {
      const image = await photoAvatar(ctx.db, request.user.id, PREVIEW_SIZE);
      if (!image) throw new ApiError('not_found', 'You have no photo.');
      return reply.type('image/jpeg').header('Cache-Control', 'private, no-store').send(image.bytes);
    });

    app.post('/account/photo', { config: SITE, schema: formSchema({ photo: fileField }) }, async (request, reply) => {
      const user = request.user;
      const file = request.body.photo;
      const refuse = (error: string, status: number) => photoPage(ctx, request, reply, user, { error }, status);
      if (!file) return refuse('Choose a picture to upload.', 400);
      if (file.tooLarge) return refuse(`The picture is larger than ${PHOTO_UPLOAD_MAX_BYTES / 1024 / 1024} MB. Choose a smaller one.`, 413);
      const limit = await ctx.limiter.consume('site-photo', String(user.id), UPLOADS_PER_MINUTE);
      if (!limit.allowed) {
        reply.header('Retry-After', String(limit.resetSeconds));
        return refuse(`You have uploaded several pictures just now. Try again in ${limit.resetSeconds} seconds.`, 429);
      }
      let photo: Awaited<ReturnType<typeof preparePhoto>>;
      try {
        photo = await preparePhoto(file.data);
      } catch (e) {
        if (e instanceof PhotoRefused) return refuse(e.message, e.status);
        throw e;
      }
      await db.write((w) => savePhoto(w, user.id, photo, ctx.clock.now()));
      return seeOther(reply, '/account/photo?msg=saved');
    });

    app.post('/account/photo/remove', { config: SITE, schema: formSchema({}) }, async (request, reply) => {
      await db.write((w) => deletePhoto(w, request.user.id));
      return seeOther(reply, '/account/photo?msg=removed');
    });
  };
}
