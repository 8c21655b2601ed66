// The audit log: shown newest first a page at a time, and exported whole (up to a bound) as CSV or JSON.
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../../context.js';
import type { TypedApp } from '../../../http/typed-app.js';
import { listAudit, type AuditEntry } from '../../../repositories/operator-audit.js';
import { sendPage, SITE } from '../../http.js';
import { AuditPage } from '../../views/Console.js';
import { viewerOfOperator } from './pages.js';

const PAGE = 50;
/** The most entries one export holds; older ones are in the database for whoever needs more. */
export const EXPORT_LIMIT = 10_000;

/** A CSV cell: quoted, and a leading = + - @ made text so that a spreadsheet does not run it. */
function cell(value: string): string {
  const safe = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return `"${safe.replace(/"/g, '""')}"`;
}

export function auditCsv(entries: AuditEntry[]): string {
  const head = ['id', 'at', 'actor', 'action', 'target', 'before', 'after'].join(',');
  const lines = entries.map((e) =>
    [String(e.id), new Date(e.at).toISOString(), e.actorUserId, e.action, e.target, JSON.stringify(e.before), JSON.stringify(e.after)].map(cell).join(','),
  );
  return `${[head, ...lines].join('\r\n')}\r\n`;
}

export function registerAuditPages(app: TypedApp, ctx: AppContext): void {
  app.get(
    '/console/audit',
    { config: SITE, schema: { hide: true, querystring: Type.Object({ before: Type.Optional(Type.String({ pattern: '^[0-9]{1,15}$' })) }) } },
    async (request, reply) => {
      const before = request.query.before === undefined ? undefined : Number(request.query.before);
      const entries = await listAudit(ctx.db, { limit: PAGE, ...(before !== undefined ? { beforeId: before } : {}) });
      const last = entries.at(-1);
      const nextBefore = entries.length === PAGE && last ? last.id : null;
      return sendPage(reply, <AuditPage viewer={await viewerOfOperator(ctx, request, reply)} entries={entries} nextBefore={nextBefore} />);
    },
  );

  app.get(
    '/console/audit/export',
    { config: SITE, schema: { hide: true, querystring: Type.Object({ format: Type.Union([Type.Literal('csv'), Type.Literal('json')]) }) } },
    async (request, reply) => {
      const entries = await listAudit(ctx.db, { limit: EXPORT_LIMIT });
      const date = new Date(ctx.clock.now()).toISOString().slice(0, 10);
      reply.header('Cache-Control', 'no-store').header('Content-Disposition', `attachment; filename="idsvc-audit-${date}.${request.query.format}"`);
      if (request.query.format === 'csv') return reply.type('text/csv; charset=utf-8').send(auditCsv(entries));
      return reply.type('application/json; charset=utf-8').send(JSON.stringify({ entries }, null, 2));
    },
  );
}
