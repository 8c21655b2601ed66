// Following the link that changes an account's address (services/email-change.ts). As with the
// confirmation link, the GET only shows what the link does, with a button (mail scanners open
// links); the POST makes the switch. Neither logs in.
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../context.js';
import { confirmEmailChange, previewEmailChange } from '../../services/email-change.js';
import { formSchema, mailedTokenField, seeOther, sendPage, SITE } from '../http.js';
import type { TypedApp } from '../../http/typed-app.js';
import { csrfToken } from '../session.js';
import { ConfirmEmailChangePage, LinkProblemPage } from '../views/Ownership.js';

const USED_OR_EXPIRED = {
  title: 'This link no longer works',
  message: 'It was used already, a newer change was asked for, or it is more than 24 hours old. Log in and ask for the change again.',
};

export function registerEmailChangeRoutes(app: TypedApp, ctx: AppContext): void {
  app.get(
    '/email/confirm',
    { config: SITE, schema: { hide: true, querystring: Type.Object({ token: Type.Optional(mailedTokenField) }) } },
    async (request, reply) => {
      const token = request.query.token ?? '';
      const preview = await previewEmailChange(ctx, token);
      if (!preview) return sendPage(reply, <LinkProblemPage {...USED_OR_EXPIRED} />, 410);
      return sendPage(
        reply,
        <ConfirmEmailChangePage csrf={await csrfToken(ctx, request, reply)} token={token} userId={preview.userId} newEmail={preview.newEmail} />,
      );
    },
  );

  app.post('/email/confirm', { config: SITE, schema: formSchema({ token: mailedTokenField }) }, async (request, reply) => {
    const outcome = await confirmEmailChange(ctx, request.body.token, request.site.sessionId);
    switch (outcome.kind) {
      case 'changed':
        return seeOther(reply, request.site.user?.id === outcome.userRef ? '/account/security?msg=email_changed#email' : '/login?msg=email_changed');
      case 'invalid':
        return sendPage(reply, <LinkProblemPage {...USED_OR_EXPIRED} />, 410);
      case 'address_taken':
        return sendPage(
          reply,
          <LinkProblemPage title="This address has an account" message="Another account confirmed this address first, so nothing changed." />,
          409,
        );
    }
  });
}
