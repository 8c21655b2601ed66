import { Layout, Notice, type Viewer } from './Layout.js';

export function HomePage({ viewer, notice }: { viewer: Viewer | null; notice?: string | undefined }) {
  return (
    <Layout title="Your identities, in one place" viewer={viewer}>
      {notice ? <Notice kind="success">{notice}</Notice> : null}
      <section class="hero" aria-labelledby="hero-title">
        <h1 id="hero-title">All your online identities, in one place</h1>
        <p class="lead">
          List where you are on the web — GitHub, Mastodon, your blog and hundreds more — prove each one with a <code>rel="me"</code> link, and let the sites
          you use fill in your profiles from it. Only when you say so.
        </p>
        <p class="actions">
          {viewer ? (
            <a class="button" href="/account">
              Go to your account
            </a>
          ) : (
            <>
              <a class="button" href="/signup">
                Create an account
              </a>
              <a class="button secondary" href="/login">
                Log in
              </a>
            </>
          )}
        </p>
      </section>
      <section class="features" aria-label="What you can do">
        <article class="card">
          <h2>Collect</h2>
          <p>Pick a service, type your name there, and see the address it gives. Change or remove entries whenever you like.</p>
        </article>
        <article class="card">
          <h2>Prove</h2>
          <p>
            Link back to your public page with <code>rel="me"</code> and the entry is marked verified. We check again every day.
          </p>
        </article>
        <article class="card">
          <h2>Share on your terms</h2>
          <p>Partner sites see you only after you opt in. You see every site you connected, and can end any link.</p>
        </article>
      </section>
    </Layout>
  );
}
