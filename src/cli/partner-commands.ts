import type { Command } from 'commander';
import {
  allowedOrigins,
  createPartner,
  findPartner,
  listPartners,
  rotatePartnerToken,
  rotateWebhookSecret,
  updatePartner,
  type Partner,
  type PartnerSettings,
} from '../repositories/partners.js';
import type { AppContext } from '../context.js';
import { CliError, print, type Out } from './output.js';
import { withContext } from './run.js';
import { partnerUsageCommand } from './partner-usage-command.js';

export function partnerView(p: Partner) {
  return {
    id: p.id,
    name: p.name,
    api_key: p.api_key,
    trusted: p.trusted,
    suspended: p.suspended,
    legacy_open_reads: p.legacy_open_reads,
    origins: allowedOrigins(p),
    webhook_url: p.webhook_url,
    webhook_disabled: p.webhook_disabled,
    previous_webhook_secret_signs_until:
      p.previous_webhook_secret_expires_at !== null && Number(p.previous_webhook_secret_expires_at) > Date.now()
        ? new Date(Number(p.previous_webhook_secret_expires_at)).toISOString()
        : null,
    rate_limit_per_minute: p.rate_limit_per_minute,
    created_at: new Date(p.created_at).toISOString(),
  };
}

function partnerText(p: Partner): string {
  const v = partnerView(p);
  return Object.entries(v)
    .map(([k, x]) => `${k.padEnd(22)} ${Array.isArray(x) ? x.join(', ') || '(any)' : String(x)}`)
    .join('\n');
}

function checkUrl(u: string, what: string): string {
  try {
    const parsed = new URL(u);
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error();
    return what === 'origin' ? parsed.origin : parsed.toString();
  } catch {
    throw new CliError(`${what} must be an http(s) URL: ${u}`);
  }
}

/**
 * A webhook URL must pass the outbound address policy that delivery applies (SPEC §9, §10) when it
 * is set, so the operator learns now, not from a dead outbox. The error names the host only: a
 * URL's path or query may carry the partner's own secret.
 */
async function checkWebhookUrl(ctx: AppContext, u: string): Promise<string> {
  const url = checkUrl(u, 'webhook');
  // The HTTP client loads only for the commands that check or call a webhook URL.
  const { checkOutboundUrl } = await import('../verification/safe-fetch.js');
  const verdict = await checkOutboundUrl(url, { allowPrivate: ctx.config.fetchAllowPrivate });
  if (verdict.ok) return url;
  if (verdict.reason === 'dns_failed' || verdict.reason === 'timeout') throw new CliError(`--webhook: ${verdict.detail}; check the host name`);
  throw new CliError(
    `--webhook refused by the outbound address policy: ${verdict.detail}. Webhooks are delivered only to public addresses on ports 80 and 443 ` +
      '(no loopback, private, link-local or other special-purpose ranges, nor their IPv4-mapped forms); FETCH_ALLOW_PRIVATE=1 lifts this, for tests and closed networks only.',
  );
}

const collect = (v: string, prev: string[] = []) => [...prev, v];

/** The subcommands of `idsvc partner` (the group itself, with its description, is program.ts's). */
export function partnerCommands(partner: Command, run: () => Out): void {
  partner
    .command('create')
    .requiredOption('--name <name>', 'display name')
    .option('--trusted', 'may see usrSvcId of every entry')
    .option('--origin <url>', 'allowed browser origin (repeatable)', collect)
    .option('--webhook <url>', 'webhook endpoint for change events')
    .option('--legacy-open-reads', 'UNSAFE: serve the private view on the api_key alone, as the original service did')
    .action(async (o: { name: string; trusted?: boolean; origin?: string[]; webhook?: string; legacyOpenReads?: boolean }) =>
      withContext(run(), async (ctx, out) => {
        const input = {
          name: o.name,
          trusted: o.trusted ?? false,
          origins: (o.origin ?? []).map((u) => checkUrl(u, 'origin')),
          webhookUrl: o.webhook ? await checkWebhookUrl(ctx, o.webhook) : null,
          legacyOpenReads: o.legacyOpenReads ?? false,
        };
        const created = await ctx.db.write((w) => createPartner(w, input, ctx.clock.now()));
        print(out, { api_key: created.apiKey, api_token: created.apiToken, webhook_secret: created.partner.webhook_secret, id: created.partner.id }, () =>
          [
            `partner ${created.partner.id} "${o.name}" created`,
            `api_key    ${created.apiKey}`,
            `api_token  ${created.apiToken}   (shown once: store it now)`,
            ...(created.partner.webhook_secret ? [`webhook_secret ${created.partner.webhook_secret}`] : []),
          ].join('\n'),
        );
      }),
    );

  partner.command('list').action(async () =>
    withContext(run(), async (ctx, out) => {
      const all = await listPartners(ctx.db);
      print(out, all.map(partnerView), () =>
        all.length === 0
          ? '(no partners)'
          : all.map((p) => `${String(p.id).padStart(4)}  ${p.api_key}  ${p.suspended ? 'SUSPENDED ' : ''}${p.trusted ? 'trusted ' : ''}${p.name}`).join('\n'),
      );
    }),
  );

  const find = async (ctx: Parameters<Parameters<typeof withContext>[1]>[0], key: string) => {
    const p = await findPartner(ctx.db, key);
    if (!p) throw new CliError(`no partner with api_key or id ${key}`);
    return p;
  };

  partner.command('show <key>').action(async (key: string) =>
    withContext(run(), async (ctx, out) => {
      const p = await find(ctx, key);
      print(out, partnerView(p), () => partnerText(p));
    }),
  );

  partner
    .command('rotate-token <key>')
    .description('issue a new api_token; the old one keeps working for the grace period')
    .option('--grace <seconds>', 'grace period for the old token (default TOKEN_GRACE_SECONDS, 24 h)')
    .action(async (key: string, o: { grace?: string }) =>
      withContext(run(), async (ctx, out) => {
        const p = await find(ctx, key);
        const grace = o.grace === undefined ? ctx.config.tokenGraceSeconds : Number(o.grace);
        if (!Number.isInteger(grace) || grace < 0) throw new CliError('--grace must be a whole number of seconds');
        const token = await ctx.db.write((w) => rotatePartnerToken(w, p.id, grace, ctx.clock.now()));
        print(
          out,
          { api_key: p.api_key, api_token: token, previous_token_valid_seconds: grace },
          () => `new api_token  ${token}   (shown once)\nthe previous token stays valid for ${grace} s`,
        );
      }),
    );

  for (const [name, suspended] of [
    ['suspend', true],
    ['resume', false],
  ] as const) {
    partner.command(`${name} <key>`).action(async (key: string) =>
      withContext(run(), async (ctx, out) => {
        const id = (await find(ctx, key)).id;
        const p = await ctx.db.write((w) => updatePartner(w, id, { suspended }, ctx.clock.now()));
        print(out, partnerView(p), () => `partner ${p.id} ${suspended ? 'suspended' : 'resumed'}`);
      }),
    );
  }

  partner
    .command('set <key>')
    .option('--name <name>')
    .option('--trusted <on|off>')
    .option('--legacy-open-reads <on|off>')
    .option('--origin <url>', 'allowed origin (repeatable; replaces the list)', collect)
    .option('--any-origin', 'clear the allowed-origin list')
    .option('--webhook <url>', 'webhook endpoint ("none" removes it)')
    .option(
      '--rate-limit <n>',
      'proven requests per minute for this api_key (api_token or signed widget); also caps its unproven budget when lower ("default" clears the override)',
    )
    .action(
      async (
        key: string,
        o: { name?: string; trusted?: string; legacyOpenReads?: string; origin?: string[]; anyOrigin?: boolean; webhook?: string; rateLimit?: string },
      ) =>
        withContext(run(), async (ctx, out) => {
          const onOff = (v: string | undefined, flag: string) => {
            if (v === undefined) return undefined;
            if (v === 'on' || v === 'true') return true;
            if (v === 'off' || v === 'false') return false;
            throw new CliError(`${flag} takes on or off`);
          };
          const settings: PartnerSettings = {};
          if (o.name !== undefined) settings.name = o.name;
          const trusted = onOff(o.trusted, '--trusted');
          if (trusted !== undefined) settings.trusted = trusted;
          const legacy = onOff(o.legacyOpenReads, '--legacy-open-reads');
          if (legacy !== undefined) settings.legacyOpenReads = legacy;
          if (o.anyOrigin) settings.origins = [];
          if (o.origin) settings.origins = o.origin.map((u) => checkUrl(u, 'origin'));
          if (o.webhook !== undefined) settings.webhookUrl = o.webhook === 'none' ? null : await checkWebhookUrl(ctx, o.webhook);
          if (o.rateLimit !== undefined) {
            if (o.rateLimit === 'default') settings.rateLimitPerMinute = null;
            else if (/^\d+$/.test(o.rateLimit) && Number(o.rateLimit) > 0) settings.rateLimitPerMinute = Number(o.rateLimit);
            else throw new CliError('--rate-limit takes a positive whole number or "default"');
          }
          const before = await find(ctx, key);
          const p = await ctx.db.write((w) => updatePartner(w, before.id, settings, ctx.clock.now()));
          // The secret is shown once, when this command creates it: the partner's receiver needs it.
          const created = before.webhook_secret === null && p.webhook_secret !== null ? p.webhook_secret : null;
          print(out, { ...partnerView(p), ...(created ? { webhook_secret: created } : {}) }, () =>
            [partnerText(p), ...(created ? [`${'webhook_secret'.padEnd(22)} ${created}   (shown once: give it to the partner now)`] : [])].join('\n'),
          );
        }),
    );

  partner
    .command('rotate-webhook-secret <key>')
    .description('issue a new webhook secret; the old one keeps signing (beside the new one) for the grace period')
    .option('--grace <seconds>', 'how long the old secret still signs (default WEBHOOK_SECRET_GRACE_SECONDS, 24 h)')
    .action(async (key: string, o: { grace?: string }) =>
      withContext(run(), async (ctx, out) => {
        const p = await find(ctx, key);
        if (!p.webhook_url) throw new CliError(`partner ${p.id} has no webhook endpoint: set one with \`idsvc partner set ${p.api_key} --webhook URL\``);
        const grace = o.grace === undefined ? ctx.config.webhookSecretGraceSeconds : Number(o.grace);
        if (!Number.isInteger(grace) || grace < 0) throw new CliError('--grace must be a whole number of seconds');
        const secret = await ctx.db.write((w) => rotateWebhookSecret(w, p.id, grace, ctx.clock.now()));
        print(
          out,
          { api_key: p.api_key, webhook_secret: secret, previous_secret_signs_seconds: grace },
          () =>
            `new webhook_secret  ${secret}   (shown once: give it to the partner now)\n` +
            (grace > 0 ? `deliveries carry a signature with the previous secret too for ${grace} s` : 'the previous secret no longer signs'),
        );
      }),
    );

  partner
    .command('test-webhook <key>')
    .description("send a signed `ping` event to the partner's webhook now and print the receiver's answer (exit 1 unless it is 2xx)")
    .action(async (key: string) =>
      withContext(run(), async (ctx, out) => {
        const p = await find(ctx, key);
        if (!p.webhook_url || !p.webhook_secret)
          throw new CliError(`partner ${p.id} has no webhook endpoint: set one with \`idsvc partner set ${p.api_key} --webhook URL\``);
        const { pingWebhook } = await import('../services/webhook-ping.js');
        const r = await pingWebhook(ctx, { ...p, webhook_url: p.webhook_url });
        print(out, { webhook_id: r.eventId, ok: r.ok, status: r.status, answer: r.excerpt, webhook_disabled: p.webhook_disabled }, () =>
          [
            `ping ${r.eventId}: ${r.status === null ? 'no answer' : `HTTP ${r.status}`}${r.ok ? ' (accepted)' : ' (not accepted: only a 2xx answer counts)'}`,
            ...(r.excerpt ? [`answer  ${r.excerpt}`] : []),
            ...(p.webhook_disabled ? ['note: deliveries to this endpoint are disabled after 410 Gone; `partner set --webhook URL` enables them again'] : []),
          ].join('\n'),
        );
        if (!r.ok) out.exitCode = 1;
      }),
    );

  partnerUsageCommand(partner, run);
}
