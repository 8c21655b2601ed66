// The passkeys page (/account/passkeys) and its three calls: the challenge for a new passkey and
// the browser's answer to it (JSON, from the passkey script), and the "Remove" button (a form).
// Each is limited per account and per client address, and every change is mailed to the owner.
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../../context.js';
import type { TypedApp } from '../../../http/typed-app.js';
import { passkeysOfUser } from '../../../repositories/passkeys.js';
import type { User } from '../../../repositories/users.js';
import {
  cleanPasskeyName,
  finishAddingPasskey,
  MAX_PASSKEYS_PER_ACCOUNT,
  PASSKEY_NAME_MAX,
  PasskeyRefused,
  relyingParty,
  removePasskey,
  startAddingPasskey,
} from '../../../services/passkeys.js';
import { formSchema, optionalText, seeOther, sendPage, SITE } from '../../http.js';
import { registrationResponse, sendJson } from '../../passkey-wire.js';
import { csrfToken } from '../../session.js';
import { PasskeysPage } from '../../views/Passkeys.js';

const NOTICES: Record<string, string> = {
  added: 'Your passkey is added. We mailed you a notice.',
  removed: 'The passkey is removed. We mailed you a notice.',
};
const WARNINGS: Record<string, string> = {
  not_found: 'That passkey is not one of yours, or it was already removed.',
  too_many: 'Too many changes to your passkeys just now. Try again in a minute.',
};

/** Passkey changes a minute per account (a person adds a few, once), and per client address (a shared office's several people). */
export const PASSKEY_CHANGES_PER_MINUTE = { account: 10, address: 30 };

async function passkeysPage(ctx: AppContext, request: FastifyRequest, reply: FastifyReply, user: User, msg: string | undefined) {
  return sendPage(
    reply,
    <PasskeysPage
      viewer={{ userId: user.user_id, csrf: await csrfToken(ctx, request, reply) }}
      passkeys={await passkeysOfUser(ctx.db, user.id)}
      offered={relyingParty(ctx.config) !== null}
      maxPasskeys={MAX_PASSKEYS_PER_ACCOUNT}
      nameMax={PASSKEY_NAME_MAX}
      notice={msg ? NOTICES[msg] : undefined}
      warning={msg ? WARNINGS[msg] : undefined}
    />,
  );
}

/** One change against both limits; the seconds to wait when over either, else 0. */
async function changeWait(ctx: AppContext, request: FastifyRequest, user: User): Promise<number> {
  const [account, address] = await Promise.all([
    ctx.limiter.consume('site-passkey-account', String(user.id), PASSKEY_CHANGES_PER_MINUTE.account),
    ctx.limiter.consume('site-passkey-address', request.ip, PASSKEY_CHANGES_PER_MINUTE.address),
  ]);
  return account.allowed && address.allowed ? 0 : Math.max(account.allowed ? 0 : account.resetSeconds, address.allowed ? 0 : address.resetSeconds);
}

/** Registered inside the account routes' plugin, whose preHandler sets `request.user`. */
export function registerPasskeyRoutes(app: TypedApp, ctx: AppContext): void {
  app.get('/account/passkeys', { config: SITE, schema: { hide: true, querystring: Type.Object({ msg: optionalText(40) }) } }, async (request, reply) =>
    passkeysPage(ctx, request, reply, request.user, request.query.msg),
  );

  app.post(
    '/account/passkeys/remove',
    { config: SITE, schema: formSchema({ id: Type.String({ maxLength: 9, pattern: '^[0-9]{1,9}$' }) }) },
    async (request, reply) => {
      const wait = await changeWait(ctx, request, request.user);
      if (wait > 0) {
        reply.header('Retry-After', String(wait));
        return seeOther(reply, '/account/passkeys?msg=too_many');
      }
      const removed = await removePasskey(ctx, request.user, Number(request.body.id));
      return seeOther(reply, removed ? '/account/passkeys?msg=removed' : '/account/passkeys?msg=not_found');
    },
  );

  const rp = relyingParty(ctx.config);
  if (!rp) return;

  app.post('/account/passkeys/options', { config: SITE, schema: formSchema({ name: Type.String({ maxLength: 256 }) }) }, async (request, reply) => {
    const wait = await changeWait(ctx, request, request.user);
    if (wait > 0) {
      reply.header('Retry-After', String(wait));
      return sendJson(reply, 429, { error: 'Too many changes to your passkeys just now. Try again in a minute.' });
    }
    const name = cleanPasskeyName(request.body.name);
    if (!name) return sendJson(reply, 400, { error: 'Give the passkey a name first, so you can tell it apart later.' });
    // The account routes' preHandler let only a logged-in request through: it has a session.
    const sessionId = request.site.sessionId ?? '';
    try {
      return sendJson(reply, 200, { options: await startAddingPasskey(ctx, rp, request.user, sessionId, name) });
    } catch (e) {
      if (e instanceof PasskeyRefused) return sendJson(reply, 400, { error: e.message });
      throw e;
    }
  });

  app.post('/account/passkeys/add', { config: SITE, schema: formSchema({ response: registrationResponse }) }, async (request, reply) => {
    const wait = await changeWait(ctx, request, request.user);
    if (wait > 0) {
      reply.header('Retry-After', String(wait));
      return sendJson(reply, 429, { error: 'Too many changes to your passkeys just now. Try again in a minute.' });
    }
    try {
      await finishAddingPasskey(ctx, rp, request.user, request.site.sessionId ?? '', request.body.response);
    } catch (e) {
      if (e instanceof PasskeyRefused) return sendJson(reply, 400, { error: e.message });
      throw e;
    }
    return sendJson(reply, 200, { redirect: '/account/passkeys?msg=added' });
  });
}
