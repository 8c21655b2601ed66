// Following a mailed link (services/ownership.ts). The GET only shows what the link is for, with a
// button: mail scanners and link previews open links, and must not prove an address for anyone.
// The POST proves it, and logs in only the browser that signed up for that account (signup-browser.ts):
// a link forwarded by someone else must not open their account in your browser, so anywhere else
// you log in with your password after confirming.
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../context.js';
import { followLink, previewLink } from '../../services/ownership.js';
import { formSchema, mailedTokenField, seeOther, sendPage, SITE } from '../http.js';
import type { TypedApp } from '../../http/typed-app.js';
import { findUserByRef } from '../../repositories/users.js';
import { signedUpHere } from '../signup-browser.js';
import { csrfToken, startSession } from '../session.js';
import { ConfirmLinkPage, LinkProblemPage } from '../views/Ownership.js';

const USED_OR_EXPIRED = {
  title: 'This link no longer works',
  message: 'It was used already, or it is more than 24 hours old. Log in to ask for a new one, or sign up again.',
};

export function registerConfirmRoutes(app: TypedApp, ctx: AppContext): void {
  app.get(
    '/confirm',
    { config: SITE, schema: { hide: true, querystring: Type.Object({ token: Type.Optional(mailedTokenField) }) } },
    async (request, reply) => {
      const token = request.query.token ?? '';
      const preview = await previewLink(ctx, token);
      if (!preview) return sendPage(reply, <LinkProblemPage {...USED_OR_EXPIRED} />, 410);
      const csrf = await csrfToken(ctx, request, reply);
      return sendPage(
        reply,
        preview.purpose === 'claim' ? (
          <ConfirmLinkPage csrf={csrf} token={token} userId={preview.userId} holderUserId={preview.holderUserId} />
        ) : (
          <ConfirmLinkPage csrf={csrf} token={token} userId={preview.userId} />
        ),
      );
    },
  );

  app.post('/confirm', { config: SITE, schema: formSchema({ token: mailedTokenField }) }, async (request, reply) => {
    const outcome = await followLink(ctx, request.body.token);
    if (outcome.kind === 'confirmed' || outcome.kind === 'created') {
      if (request.site.user?.id === outcome.userRef) return seeOther(reply, '/account?msg=confirmed');
      const user = await findUserByRef(ctx.db, outcome.userRef);
      if (user && (await signedUpHere(ctx, request, reply, user))) {
        await startSession(ctx, request, reply, user);
        return seeOther(reply, '/account?msg=confirmed');
      }
    }
    switch (outcome.kind) {
      case 'confirmed':
        return seeOther(reply, '/login?msg=confirmed');
      case 'created':
        return seeOther(reply, '/login?msg=created');
      case 'invalid':
        return sendPage(reply, <LinkProblemPage {...USED_OR_EXPIRED} />, 410);
      case 'address_taken':
        return sendPage(
          reply,
          <LinkProblemPage
            title="This address has an account"
            message="Another sign-up with this address was confirmed first. If that was you, log in; if you forgot the password, set a new one from the log-in page."
          />,
          409,
        );
      case 'user_id_taken':
        return sendPage(
          reply,
          <LinkProblemPage
            title="That userId was taken meanwhile"
            message={`Someone chose “${outcome.userId}” before you confirmed. Sign up again with another userId.`}
          />,
          409,
        );
    }
  });
}
