// Profile fields of SPEC §4.7, in answer order, with their column names.
export const PROFILE_FIELDS = [
  ['nickname', 'nickname'],
  ['firstName', 'first_name'],
  ['lastName', 'last_name'],
  ['street', 'street'],
  ['city', 'city'],
  ['region', 'region'],
  ['country', 'country'],
  ['bio', 'bio'],
] as const;

export type ProfileField = (typeof PROFILE_FIELDS)[number][0];
export type ProfileColumn = (typeof PROFILE_FIELDS)[number][1];
export const PROFILE_FIELD_NAMES: readonly ProfileField[] = PROFILE_FIELDS.map(([f]) => f);
export const PROFILE_MAX_LENGTH: Record<ProfileField, number> = {
  nickname: 100,
  firstName: 100,
  lastName: 100,
  street: 200,
  city: 100,
  region: 100,
  country: 100,
  bio: 2000,
};

export function isProfileField(name: string): name is ProfileField {
  return (PROFILE_FIELD_NAMES as readonly string[]).includes(name);
}

export function parsePublicFields(json: string): ProfileField[] {
  try {
    const v: unknown = JSON.parse(json);
    return Array.isArray(v) ? v.filter((x): x is ProfileField => typeof x === 'string' && isProfileField(x)) : [];
  } catch {
    return [];
  }
}

/**
 * The filled-in profile fields in answer order (SPEC §4.7): every one (`all`: what a linked
 * partner reads) or only those the user made public (`public`).
 */
export function profileFields(
  user: Record<ProfileColumn, string | null> & { public_fields: string },
  which: 'all' | 'public',
): Partial<Record<ProfileField, string>> {
  const pub = new Set(parsePublicFields(user.public_fields));
  const out: Partial<Record<ProfileField, string>> = {};
  for (const [field, column] of PROFILE_FIELDS) {
    const v = user[column];
    if (v && (which === 'all' || pub.has(field))) out[field] = v;
  }
  return out;
}
