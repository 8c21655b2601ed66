// "Issue / Rotate the api_token": the answer is the page itself, with the token shown this once
// (never a redirect, whose URL could carry it into a history or a log). The form names the token it
// replaces (`replaces`, a stamp that reveals nothing of it): sent again by a reload, or from a tab
// opened before, it finds that token already replaced, and rotates nothing.
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../../context.js';
import type { TypedApp } from '../../../http/typed-app.js';
import { currentTokenStamp, issueToken, memberPartner } from '../../../services/partner-dashboard.js';
import { formSchema, SITE } from '../../http.js';
import { dashboardPage, partnerParams } from './page.js';

export function registerTokenIssue(app: TypedApp, ctx: AppContext): void {
  const span = (seconds: number) => (seconds >= 7200 ? `${Math.round(seconds / 3600)} hours` : seconds >= 3600 ? '1 hour' : `${seconds} seconds`);
  app.post(
    '/partners/:id/token',
    { config: SITE, schema: { ...formSchema({ replaces: Type.Optional(Type.String({ maxLength: 64 })) }), params: partnerParams } },
    async (request, reply) => {
      const partner = await memberPartner(ctx, request.user, Number(request.params.id));
      // Without the field (a client other than the page), the current token is the one replaced.
      const issued = await issueToken(ctx, partner, request.body.replaces ?? currentTokenStamp(partner));
      const after = await memberPartner(ctx, request.user, partner.id);
      if (!issued) {
        const error = 'That api_token was already issued, and is never shown again. Rotate it once more if you need a new one.';
        return dashboardPage(ctx, request, reply, after, 'keys', { error }, 409);
      }
      const note =
        issued.graceSeconds > 0
          ? `The previous api_token keeps working for ${span(issued.graceSeconds)}, then stops.`
          : 'Store it on your server; send it only in POST bodies.';
      return dashboardPage(ctx, request, reply, after, 'keys', { revealed: { what: 'api_token', value: issued.token, note } });
    },
  );
}
