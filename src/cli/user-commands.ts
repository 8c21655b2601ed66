import type { Command } from 'commander';
import { isValidEmail, isValidUserId } from '../domain/identifiers.js';
import { hashPassword, passwordProblem } from '../domain/passwords.js';
import { isProfileField, parsePublicFields, PROFILE_FIELDS, PROFILE_MAX_LENGTH, type ProfileField } from '../domain/profile.js';
import { createUser } from '../services/orphan-subjects.js';
import { DuplicateUserError, findUserForOperator, listUsers, setUserFlags, setUserRole, type ProfileValues, type User } from '../repositories/users.js';
import { deleteAccount, saveProfile, setOptIn } from '../services/accounts.js';
import { createUnprovenAccount } from '../services/ownership.js';
import { CliError, print, readStdin, type Out } from './output.js';
import { withContext } from './run.js';
import { userVerifyCommand } from './user-verify-command.js';
import { isProvenAccount } from '../domain/visibility.js';

export function userView(u: User) {
  const profile: Record<string, string | null> = {};
  for (const [field, column] of PROFILE_FIELDS) profile[field] = u[column];
  return {
    userId: u.user_id,
    email: u.email,
    /** The user's consent; `visible` is whether partners see them (consent and a proven address). */
    opted_in: u.consented,
    email_proven: isProvenAccount(u),
    visible: u.opted_in,
    pro: u.pro,
    discoverable: u.discoverable,
    role: u.role,
    profile,
    public_fields: parsePublicFields(u.public_fields),
    created_at: new Date(u.created_at).toISOString(),
  };
}

function userText(u: User): string {
  const v = userView(u);
  const lines = [
    `userId       ${v.userId}`,
    `email        ${v.email}${v.email_proven ? '' : '  (not confirmed yet)'}`,
    `opted_in     ${v.opted_in}`,
    `visible      ${v.visible}`,
    `pro          ${v.pro}`,
    `discoverable ${v.discoverable}`,
    `role         ${v.role}`,
  ];
  for (const [k, val] of Object.entries(v.profile))
    if (val) lines.push(`${k.padEnd(12)} ${val}${v.public_fields.includes(k as ProfileField) ? '  (public)' : ''}`);
  return lines.join('\n');
}

/** A typo such as "yes" must not silently turn a consent off. */
function onOff(v: string, flag: string): boolean {
  if (v === 'on' || v === 'true') return true;
  if (v === 'off' || v === 'false') return false;
  throw new CliError(`${flag} takes on or off`);
}

/** The subcommands of `idsvc user` (the group itself, with its description, is program.ts's). */
export function userCommands(user: Command, run: () => Out): void {
  user
    .command('create')
    .description('create an account; the password is read from standard input')
    .requiredOption('--email <address>')
    .requiredOption('--user-id <userId>', 'public id, [a-z0-9_]{3,30}')
    .option('--opt-in', 'the user consents to be shown to partners that know their e-mail address or userId')
    .option('--discoverable', 'the user also consents to be found: by reverse_lookup, return_contacts and WebFinger mailto: (off by default)')
    .option('--unproven', 'do not vouch for the address: mail the owner a link to confirm it (the account stays hidden until then)')
    .action(async (o: { email: string; userId: string; optIn?: boolean; discoverable?: boolean; unproven?: boolean }) =>
      withContext(run(), async (ctx, out) => {
        if (!isValidEmail(o.email)) throw new CliError('--email is not a valid e-mail address');
        if (!isValidUserId(o.userId)) throw new CliError('--user-id must be 3–30 characters of a-z, 0-9 and _, and not 32 or 64 hex digits');
        const password = await readStdin(out);
        const problem = await passwordProblem(password, { userId: o.userId, email: o.email });
        if (problem) throw new CliError(`password ${problem}`);
        try {
          const input = {
            email: o.email,
            userId: o.userId,
            passwordHash: await hashPassword(password, ctx.config.argon2Cost),
            optedIn: o.optIn ?? false,
            discoverable: o.discoverable ?? false,
          };
          // The operator vouches for the address, unless told not to.
          const u = o.unproven ? await createUnprovenAccount(ctx, input) : await createUser(ctx.db, { ...input, proven: true }, ctx.clock.now());
          print(out, userView(u), () =>
            o.unproven
              ? `user ${u.user_id} created; a link to confirm the address was queued (the server's mail job sends it)`
              : `user ${u.user_id} created${u.opted_in ? ' (opted in)' : ''}`,
          );
        } catch (e) {
          if (e instanceof DuplicateUserError) throw new CliError(e.message);
          throw e;
        }
      }),
    );

  user.command('list').action(async () =>
    withContext(run(), async (ctx, out) => {
      const all = await listUsers(ctx.db);
      print(out, all.map(userView), () =>
        all.length === 0
          ? '(no users)'
          : all
              .map((u) => `${u.user_id.padEnd(30)} ${u.opted_in ? 'opted-in ' : 'hidden   '}${!isProvenAccount(u) ? 'unconfirmed ' : ''}${u.pro ? 'pro' : ''}`)
              .join('\n'),
      );
    }),
  );

  const find = async (ctx: Parameters<Parameters<typeof withContext>[1]>[0], who: string) => {
    const u = await findUserForOperator(ctx.db, who);
    if (!u) throw new CliError(`no user ${who.includes('@') ? 'with that e-mail address' : who}`);
    return u;
  };

  user
    .command('show <user>')
    .description('by userId or e-mail address')
    .action(async (who: string) =>
      withContext(run(), async (ctx, out) => {
        const u = await find(ctx, who);
        print(out, userView(u), () => userText(u));
      }),
    );

  const set = user.command('set <user>').description('change profile fields, their public flags and opt-in');
  for (const [field] of PROFILE_FIELDS) set.option(`--${field.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)} <value>`, `${field} ("" clears it)`);
  set.option('--public <fields>', 'comma-separated profile fields to make public (replaces the list; "" for none)');
  set.option('--opt-in', 'show the user to partners');
  set.option('--opt-out', 'hide the user from every partner');
  set.option('--discoverable <on|off>', "findable by reverse_lookup, return_contacts and WebFinger mailto: (only with the user's consent)");
  set.action(async (who: string, o: Record<string, string | boolean | undefined>) =>
    withContext(run(), async (ctx, out) => {
      const u = await find(ctx, who);
      const values: ProfileValues = {};
      for (const [field] of PROFILE_FIELDS) {
        const v = o[field];
        if (typeof v === 'string') {
          if (v.length > PROFILE_MAX_LENGTH[field]) throw new CliError(`--${field} must be at most ${PROFILE_MAX_LENGTH[field]} characters`);
          values[field] = v;
        }
      }
      let publicFields: ProfileField[] | undefined;
      if (typeof o.public === 'string') {
        const names = o.public
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean);
        const bad = names.find((n) => !isProfileField(n));
        if (bad) throw new CliError(`--public: unknown field ${bad} (fields: ${PROFILE_FIELDS.map(([f]) => f).join(', ')})`);
        publicFields = names as ProfileField[];
      }
      if (o.optIn && o.optOut) throw new CliError('--opt-in and --opt-out exclude each other');
      const discoverable = typeof o.discoverable === 'string' ? onOff(o.discoverable, '--discoverable') : undefined;
      // Hiding first and showing last: partners hear of a profile change only while it is theirs to read.
      if (o.optOut) await setOptIn(ctx, u, false);
      await saveProfile(ctx, u, values, publicFields);
      if (o.optIn) await setOptIn(ctx, u, true);
      if (discoverable !== undefined) await ctx.db.write((w) => setUserFlags(w, u.id, { discoverable }, ctx.clock.now()));
      const after = await find(ctx, who);
      print(out, userView(after), () => userText(after));
    }),
  );

  user
    .command('set-pro <user>')
    .option('--off', 'end the pro account')
    .action(async (who: string, o: { off?: boolean }) =>
      withContext(run(), async (ctx, out) => {
        const u = await find(ctx, who);
        await ctx.db.write((w) => setUserFlags(w, u.id, { pro: !o.off }, ctx.clock.now()));
        print(out, { userId: u.user_id, pro: !o.off }, () => `${u.user_id} is ${o.off ? 'no longer ' : ''}pro`);
      }),
    );

  user
    .command('set-role <user> <role>')
    .description('operator: reviews applications for keys and runs the console on the site; none: an ordinary account')
    .action(async (who: string, role: string) =>
      withContext(run(), async (ctx, out) => {
        if (role !== 'operator' && role !== 'none') throw new CliError('role must be operator or none');
        const u = await find(ctx, who);
        await ctx.db.write((w) => setUserRole(w, u.id, role, ctx.clock.now()));
        print(out, { userId: u.user_id, role }, () => (role === 'operator' ? `${u.user_id} is an operator` : `${u.user_id} is no longer an operator`));
      }),
    );

  userVerifyCommand(user, run);

  user
    .command('delete <user>')
    .description('erase the account, its central entries and links (linked partners are told)')
    .action(async (who: string) =>
      withContext(run(), async (ctx, out) => {
        const u = await find(ctx, who);
        await deleteAccount(ctx, u);
        print(out, { userId: u.user_id, deleted: true }, () => `user ${u.user_id} deleted`);
      }),
    );
}
