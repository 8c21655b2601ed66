// Small helpers shared by the site's routes: sending a page, reading a form.
import { Type, type TProperties } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { VNode } from 'preact';
import type { AppContext } from '../context.js';
import { PRIVATE_NO_STORE, readsByGet, sendPublic } from '../http/cache-headers.js';
import { csrfToken } from './session.js';
import { renderDocument, type Viewer } from './views/Layout.js';

export const SITE = { kind: 'site' } as const;

/** The body schema of a site form: its own fields, the CSRF token, nothing else. */
export function formSchema<P extends TProperties>(props: P) {
  return { body: Type.Object({ ...props, _csrf: Type.Optional(Type.String({ maxLength: 200 })) }, { additionalProperties: false }), hide: true as const };
}

export const optionalText = (maxLength: number) => Type.Optional(Type.String({ maxLength }));
export const checkbox = Type.Optional(Type.Literal('1'));
/** The secret of a mailed single-use link (confirm, claim, reset, change of address). */
export const mailedTokenField = Type.String({ maxLength: 128 });

export function sendPage(reply: FastifyReply, page: VNode, status = 200, cacheControl = 'no-store'): FastifyReply {
  // Pages can show a person's own data and carry CSRF tokens: never stored by any cache.
  return reply.code(status).type('text/html; charset=utf-8').header('Cache-Control', cacheControl).send(renderDocument(page));
}

/**
 * A page that is the same for everyone who asks without a session (the public profile page): a
 * shared cache may keep it a short while (http/cache-headers.ts). Asked for with a session, or when
 * answering sets a cookie, it shows or carries that person's own data and is sent as any page.
 */
export function sendPublicPage(ctx: AppContext, request: FastifyRequest, reply: FastifyReply, viewer: Viewer | null, page: VNode): FastifyReply {
  if (viewer !== null || reply.hasHeader('set-cookie') || !readsByGet(request)) return sendPage(reply, page, 200, PRIVATE_NO_STORE);
  // Vary: Cookie, so that a cache never answers a signed-in visitor with the page of nobody.
  return sendPublic(ctx.config, request, reply.code(200), { contentType: 'text/html; charset=utf-8', body: renderDocument(page), vary: 'Cookie' });
}

export function seeOther(reply: FastifyReply, location: string): FastifyReply {
  return reply.code(303).header('Cache-Control', 'no-store').redirect(location, 303);
}

export async function viewerOf(ctx: AppContext, request: FastifyRequest, reply: FastifyReply): Promise<Viewer | null> {
  const user = request.site.user;
  return user ? { userId: user.user_id, csrf: await csrfToken(ctx, request, reply) } : null;
}
