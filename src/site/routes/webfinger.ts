// WebFinger (RFC 7033, SPEC §12): /.well-known/webfinger?resource=acct:{userId}@{host}, mailto:
// or the profile URL, answered with a JRD whose links are the profile page and the user's public
// identities (rel "me"). Readable from any origin; unknown and hidden users are 404 alike.
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { AppContext } from '../../context.js';
import { findUserByEmail, findUserByUserId, type User } from '../../repositories/users.js';
import { normaliseProfileUrl } from '../../verification/relme.js';
import { profilePageUrl } from '../../verification/verify.js';
import { displayName } from '../views/PublicProfile.js';
import { publicProfileOf } from '../public-profile.js';
import { countSiteRead } from '../read-limit.js';

export const PROFILE_PAGE_REL = 'http://webfinger.net/rel/profile-page';
const NAME_PROPERTY = 'http://packetizer.com/ns/name';

function answer(reply: FastifyReply, status: number, body: unknown): FastifyReply {
  return (
    reply
      .code(status)
      .header('Access-Control-Allow-Origin', '*')
      // Opting out must take effect at once, so answers are revalidated rather than kept.
      .header('Cache-Control', 'no-cache')
      .type(status === 200 ? 'application/jrd+json' : 'application/json; charset=utf-8')
      .send(JSON.stringify(body))
  );
}

/** The user a resource names, by acct:, mailto: or profile URL; undefined when it names nobody here. */
async function resolve(ctx: AppContext, resource: string): Promise<User | undefined> {
  const host = new URL(ctx.config.baseUrl).host.toLowerCase();
  const db = ctx.db;
  const lower = resource.toLowerCase();
  if (lower.startsWith('acct:')) {
    let acct: string;
    try {
      acct = decodeURIComponent(resource.slice(5));
    } catch {
      return undefined;
    }
    const at = acct.lastIndexOf('@');
    if (at <= 0 || acct.slice(at + 1).toLowerCase() !== host) return undefined;
    return findUserByUserId(db, acct.slice(0, at).toLowerCase());
  }
  if (lower.startsWith('mailto:')) {
    const user = await findUserByEmail(db, resource.slice(7));
    // An address is a private key to a person: only those who agreed to be found by it are.
    return user?.discoverable ? user : undefined;
  }
  if (lower.startsWith('http://') || lower.startsWith('https://')) {
    const wanted = normaliseProfileUrl(resource);
    const prefix = normaliseProfileUrl(`${ctx.config.baseUrl}/u/x`).slice(0, -1);
    if (!wanted.startsWith(prefix)) return undefined;
    const user = await findUserByUserId(db, wanted.slice(prefix.length));
    return user && normaliseProfileUrl(profilePageUrl(ctx, user.user_id)) === wanted ? user : undefined;
  }
  return undefined;
}

export function registerWebFinger(app: FastifyInstance, ctx: AppContext): void {
  app.get('/.well-known/webfinger', { config: { kind: 'ops' }, schema: { hide: true } }, async (request, reply) => {
    const limit = await countSiteRead(ctx, request, reply);
    if (!limit.allowed) return answer(reply, 429, { error: `too many lookups from your address; retry in ${limit.retryAfter} s` });
    const q = request.query as Record<string, string | string[] | undefined>;
    const resource = q.resource;
    if (typeof resource !== 'string' || resource.trim() === '') {
      return answer(reply, 400, { error: 'the resource parameter is required, once' });
    }
    const user = await resolve(ctx, resource.trim());
    if (!user?.opted_in) return answer(reply, 404, { error: 'no such resource' });
    const p = await publicProfileOf(ctx, user);
    const links: { rel: string; href: string; type?: string; titles?: Record<string, string> }[] = [
      { rel: PROFILE_PAGE_REL, type: 'text/html', href: p.profileUrl },
      ...p.identities.filter((i) => i.url).map((i) => ({ rel: 'me', href: i.url, titles: { und: i.svcName } })),
    ];
    // RFC 7033 §4.3: rel parameters select links; everything else in the JRD stays.
    const rels = q.rel === undefined ? null : new Set(Array.isArray(q.rel) ? q.rel : [q.rel]);
    const hasName = Boolean(p.fields.firstName || p.fields.lastName || p.fields.nickname);
    return answer(reply, 200, {
      subject: `acct:${user.user_id}@${new URL(ctx.config.baseUrl).host}`,
      aliases: [p.profileUrl],
      ...(hasName ? { properties: { [NAME_PROPERTY]: displayName({ userId: user.user_id, fields: p.fields }) } } : {}),
      links: rels ? links.filter((l) => rels.has(l.rel)) : links,
    });
  });
}
