// `idsvc mail list|retry`: what the mail queue holds, and sending failed mail again. The running
// server's mail job does the sending; these commands only read and re-queue.
import type { Command } from 'commander';
import type { MailRow } from '../db/schema.js';
import { listMail, retryFailedMail } from '../repositories/mail-queue.js';
import { CliError, print, type Out } from './output.js';
import { withContext } from './run.js';

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

// The bodies are left out: they may hold single-use links.
export function mailView(m: MailRow) {
  return {
    id: m.id,
    kind: m.kind,
    to: m.to_address,
    subject: m.subject,
    status: m.status,
    attempts: m.attempts,
    created_at: iso(m.created_at),
    next_attempt_at: m.status === 'pending' ? iso(m.next_attempt_at) : null,
    sent_at: iso(m.sent_at),
    last_error: m.last_error,
  };
}

function mailLine(m: MailRow): string {
  const when = iso(m.sent_at ?? m.created_at);
  const error = m.status !== 'sent' && m.last_error ? `  ${m.last_error}` : '';
  return `${String(m.id).padStart(6)}  ${m.status.padEnd(7)} ${when}  ${m.kind.padEnd(20)} ${m.to_address}  (${m.attempts} attempt${m.attempts === 1 ? '' : 's'})${error}`;
}

/** The subcommands of `idsvc mail` (the group itself, with its description, is program.ts's). */
export function mailCommands(mail: Command, run: () => Out): void {
  mail
    .command('list')
    .description('the newest messages first (the bodies are never shown)')
    .option('--failed', 'only messages that could not be sent')
    .option('--pending', 'only messages waiting to be sent')
    .option('--limit <n>', 'how many (default 100)')
    .action(async (o: { failed?: boolean; pending?: boolean; limit?: string }) =>
      withContext(run(), async (ctx, out) => {
        if (o.failed && o.pending) throw new CliError('--failed and --pending exclude each other');
        const limit = o.limit === undefined ? 100 : Number(o.limit);
        if (!Number.isInteger(limit) || limit < 1 || limit > 10_000) throw new CliError('--limit must be a whole number from 1 to 10000');
        const status = o.failed ? 'failed' : o.pending ? 'pending' : undefined;
        const rows = await listMail(ctx.db, { ...(status ? { status } : {}), limit });
        print(out, rows.map(mailView), () => (rows.length === 0 ? `(no ${status ?? ''}${status ? ' ' : ''}mail)` : rows.map(mailLine).join('\n')));
      }),
    );

  mail
    .command('retry [ids...]')
    .description('queue failed messages again (the given ids, or all with --all)')
    .option('--all', 'every failed message')
    .action(async (ids: string[], o: { all?: boolean }) =>
      withContext(run(), async (ctx, out) => {
        if (!o.all && ids.length === 0) throw new CliError('name the messages to retry (ids from `idsvc mail list --failed`) or use --all');
        if (o.all && ids.length > 0) throw new CliError('give ids or --all, not both');
        const bad = ids.find((id) => !/^\d{1,15}$/.test(id));
        if (bad !== undefined) throw new CliError(`not a message id: ${bad}`);
        const n = await ctx.db.write((w) => retryFailedMail(w, o.all ? 'all' : ids.map(Number), ctx.clock.now()));
        print(out, { requeued: n }, () => `${n} message${n === 1 ? '' : 's'} queued again`);
      }),
    );
}
