// The account area's pages and the navigation between them.

/**
 * The account area is several short pages rather than one long one, so that each reads on a phone
 * and a person finds a thing by its name in the navigation.
 */
export const ACCOUNT_PAGES = [
  { page: 'identities', path: '/account', label: 'Identities', title: 'Your identities' },
  { page: 'sharing', path: '/account/sharing', label: 'Sharing', title: 'Sharing' },
  { page: 'profile', path: '/account/profile', label: 'Profile', title: 'Your profile' },
  { page: 'sites', path: '/account/sites', label: 'Connected sites', title: 'Connected sites' },
  { page: 'security', path: '/account/security', label: 'Security', title: 'Password and address' },
  { page: 'data', path: '/account/data', label: 'Your data', title: 'Your data' },
] as const;

export type AccountPageName = (typeof ACCOUNT_PAGES)[number]['page'];

/**
 * The account area's navigation, on every account page (the photo and proofs pages too, under the
 * entry they belong to).
 */
export function AccountNav({ current }: { current: AccountPageName }) {
  return (
    <nav aria-label="Your account" class="account-nav">
      <ul>
        {ACCOUNT_PAGES.map((p) => (
          <li key={p.page}>
            <a href={p.path} aria-current={p.page === current ? 'page' : undefined}>
              {p.label}
            </a>
          </li>
        ))}
      </ul>
    </nav>
  );
}
