// The home page and the public profile page /u/{userId}.
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../context.js';
import { ApiError } from '../../domain/errors.js';
import { photoStampOf } from '../../repositories/avatar-photos.js';
import { optionalText, sendPage, sendPublicPage, SITE, viewerOf } from '../http.js';
import type { TypedApp } from '../../http/typed-app.js';
import { findVisibleUser, publicProfileOf } from '../public-profile.js';
import { countSiteRead } from '../read-limit.js';
import { HomePage } from '../views/Home.js';
import { PublicProfilePage } from '../views/PublicProfile.js';

const HOME_NOTICES: Record<string, string> = {
  logged_out: 'You are logged out.',
  deleted: 'Your account is deleted. Everything you kept here is gone, and connected sites have been told. Goodbye!',
};

export function registerPageRoutes(app: TypedApp, ctx: AppContext): void {
  app.get('/', { config: SITE, schema: { hide: true, querystring: Type.Object({ msg: optionalText(40) }) } }, async (request, reply) => {
    const msg = request.query.msg;
    return sendPage(reply, <HomePage viewer={await viewerOf(ctx, request, reply)} notice={msg ? HOME_NOTICES[msg] : undefined} />);
  });

  app.get('/u/:userId', { config: SITE, schema: { hide: true, params: Type.Object({ userId: Type.String({ maxLength: 64 }) }) } }, async (request, reply) => {
    // Counted before the lookup: a 404 tells a scraper as much as a page does.
    const limit = await countSiteRead(ctx, request, reply);
    if (!limit.allowed)
      throw new ApiError(
        'rate_limited',
        `Too many profile pages requested from your network just now. Try again in ${limit.retryAfter} seconds.`,
        limit.retryAfter,
      );
    const user = await findVisibleUser(ctx, request.params.userId);
    // One answer for "no such account" and "not opted in", so the page tells nobody which it is.
    if (!user)
      throw new ApiError('not_found', 'There is no public profile at this address. Either no such account exists, or its owner has chosen not to be shown.');
    const p = await publicProfileOf(ctx, user);
    const viewer = await viewerOf(ctx, request, reply);
    const photo = await photoStampOf(ctx.db, user.id);
    return sendPublicPage(
      ctx,
      request,
      reply,
      viewer,
      <PublicProfilePage
        viewer={viewer}
        userId={user.user_id}
        profileUrl={p.profileUrl}
        fields={p.fields}
        identities={p.identities}
        isOwner={viewer?.userId === user.user_id}
        photoUrl={photo ? `${ctx.config.baseUrl}/avatar/${user.user_id}?s=160` : undefined}
      />,
    );
  });
}
