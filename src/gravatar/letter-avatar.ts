// The avatars idsvc serves at /avatar/{hash}: the site's letter avatar (the initials on its accent
// gradient) as SVG, and one neutral picture for every address that names no visible user, so that
// an avatar tells nothing about an account that is unknown, hidden or not yet proven.

export const AVATAR_DEFAULT_SIZE = 80;
export const AVATAR_MAX_SIZE = 2048;

/** Gravatar's `s=`/`size=`: 1–2048 pixels, 80 when absent or not a number; out-of-range values are clamped, as Gravatar does. */
export function avatarSize(raw: string | undefined): number {
  if (raw === undefined || !/^\d{1,9}$/.test(raw)) return AVATAR_DEFAULT_SIZE;
  return Math.min(AVATAR_MAX_SIZE, Math.max(1, Number(raw)));
}

/** Up to two initials: of the first and last word of the name, upper-cased, whole characters (not UTF-16 halves). */
export function initialsOf(name: string): string {
  const words = name.split(/[\s_.-]+/).filter(Boolean);
  const first = words[0];
  if (first === undefined) return '?';
  const last = words.length > 1 ? words[words.length - 1] : undefined;
  return [first, last]
    .filter((w): w is string => w !== undefined)
    .map((w) => Array.from(w)[0] ?? '')
    .join('')
    .toUpperCase();
}

const escapeXml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function svg(size: number, label: string, body: string): string {
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${size}" height="${size}" viewBox="0 0 100 100" role="img" aria-label="${escapeXml(label)}">${body}</svg>`;
}

export function letterAvatarSvg(displayName: string, size: number): string {
  const initials = initialsOf(displayName);
  // The site's .avatar: --accent to #7c4dff at 135°, text in --on-accent.
  return svg(
    size,
    displayName,
    '<defs><linearGradient id="g" x1="0" y1="0" x2="1" y2="1"><stop offset="0" stop-color="#3b4fd8"/><stop offset="1" stop-color="#7c4dff"/></linearGradient></defs>' +
      '<rect width="100" height="100" fill="url(#g)"/>' +
      `<text x="50" y="50" dy="0.35em" text-anchor="middle" font-family="system-ui,-apple-system,'Segoe UI',sans-serif" font-weight="700" font-size="${initials.length > 1 ? 40 : 46}" fill="#ffffff">${escapeXml(initials)}</text>`,
  );
}

/** A grey head and shoulders: the same for every address that names no visible user. */
export function neutralAvatarSvg(size: number): string {
  return svg(
    size,
    'No avatar',
    '<rect width="100" height="100" fill="#d5d9e0"/><circle cx="50" cy="38" r="18" fill="#f4f5f7"/><path d="M16 100c0-22 15-34 34-34s34 12 34 34z" fill="#f4f5f7"/>',
  );
}
