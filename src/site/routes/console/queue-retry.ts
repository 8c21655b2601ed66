// "Retry" on a failed mail or webhook delivery: it is due again at once.
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../../context.js';
import type { TypedApp } from '../../../http/typed-app.js';
import { ConsoleError, retryMail, retryWebhook } from '../../../services/operator-console.js';
import { formSchema, seeOther, SITE } from '../../http.js';
import { queuesPage } from './pages.js';

export function registerQueueRetry(app: TypedApp, ctx: AppContext): void {
  app.post(
    '/console/queues/retry',
    { config: SITE, schema: formSchema({ kind: Type.Union([Type.Literal('mail'), Type.Literal('webhook')]), id: Type.String({ pattern: '^[0-9]{1,15}$' }) }) },
    async (request, reply) => {
      try {
        if (request.body.kind === 'mail') await retryMail(ctx, request.user, Number(request.body.id));
        else await retryWebhook(ctx, request.user, Number(request.body.id));
      } catch (e) {
        if (!(e instanceof ConsoleError)) throw e;
        return queuesPage(ctx, request, reply, { error: e.message }, 400);
      }
      return seeOther(reply, '/console/queues?msg=retried');
    },
  );
}
